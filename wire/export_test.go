package wire

import "errors"

// DocumentedRefusal names the on-purpose refusal (docs/wire.md) that err
// is, or returns "" for any other error: the differential test tolerates
// the reference accepting an input only for these.
func DocumentedRefusal(err error) string {
	switch {
	case errors.Is(err, errTwoByteSimple):
		return "two-byte simple value"
	case errors.Is(err, errNestedChunk):
		return "nested indefinite chunk"
	case errors.Is(err, errAmbiguousEnum):
		return "ambiguous enum"
	case errors.Is(err, errDuplicateMetadataKey):
		return "duplicate metadata key"
	}
	return ""
}

// Sentinels this package keeps unexported, named for its external tests.
var (
	ErrMissingField        = errMissingField
	ErrBadIdempotencyKey   = errBadIdempotencyKey
	ErrBadAgentID          = errBadAgentID
	ErrInvalidBodyRef      = errInvalidBodyRef
	ErrInvalidCard         = errInvalidCard
	ErrUnknownContentType  = errUnknownContentType
	ErrUnknownKind         = errUnknownKind
	ErrTrailingBytes       = errTrailingBytes
	ErrMalformed           = errMalformed
	ErrBadValue            = errBadValue
	ErrProvenanceValue     = errProvenanceValue
	ErrProvenanceTooLarge  = errProvenanceTooLarge
	ErrBadID               = errBadID
	ErrBadMessageID        = errBadMessageID
	ErrMissingConversation = errMissingConversation
)
