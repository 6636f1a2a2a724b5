package iggy

import (
	"github.com/lasergo/laser/wire"
)

// ErrBadHeader reports a user header Iggy cannot carry: an empty or
// over-long key or value, an unknown kind, or a fixed-width kind of the
// wrong size. It is wire.ErrBadHeader, so either matches with errors.Is.
var ErrBadHeader = wire.ErrBadHeader

// headerBytesLen is how many bytes appendHeaderBytes writes for h.
func headerBytesLen(h wire.Headers) int { return h.EncodedLen() }

// appendHeaderBytes encodes headers the way the SDK's entries encode (u8
// kind, u32 length, bytes, for the key and then the value; keys
// String-kind, values of their own kind with their little-endian bytes as
// they are, as the AGDX Iggy binding lays them out), straight onto dst:
// one buffer can serve a whole batch, where the SDK allocates per header.
func appendHeaderBytes(dst []byte, h wire.Headers) ([]byte, error) {
	dst, _, err := h.AppendEncoded(dst)
	return dst, err
}
