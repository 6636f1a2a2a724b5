package sign

// Sentinels this package keeps unexported, named for its external tests.
var (
	ErrBadSeed          = errBadSeed
	ErrNoKey            = errNoKey
	ErrInvalidKeyRecord = errInvalidKeyRecord
)
