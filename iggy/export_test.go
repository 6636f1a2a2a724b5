package iggy

// Sentinels this package keeps unexported, named for its external tests.
var (
	ErrLeft = errLeft
)
