package iggy

import (
	"encoding/binary"
	"errors"
	"fmt"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/internal/wirekey"
	"github.com/lasergo/laser/wire"
)

// ErrBadHeader reports a user header Iggy cannot carry: an empty or
// over-long key or value, an unknown kind, or a fixed-width kind of the
// wrong size.
var ErrBadHeader = errors.New("iggy: invalid user header")

// headerBytesLen is how many bytes appendHeaderBytes writes for h.
func headerBytesLen(h wire.Headers) int {
	n := 0
	for _, e := range h {
		n += 10 + len(e.Key) + len(e.Value.Data)
	}
	return n
}

// appendHeaderBytes encodes headers the way the SDK's entries encode (the
// layout headerEntries describes: u8 kind, u32 length, bytes, for the key
// and then the value; keys String-kind, values of their own kind with their
// little-endian bytes as they are, as the AGDX Iggy binding lays them out),
// straight onto dst: one buffer can serve a whole
// batch, where the SDK allocates per header.
func appendHeaderBytes(dst []byte, h wire.Headers) ([]byte, error) {
	for _, e := range h {
		if err := checkHeader(e); err != nil {
			return dst, err
		}
		dst = append(dst, byte(iggcon.String))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.Key)))
		dst = append(dst, e.Key...)
		dst = append(dst, byte(e.Value.Kind))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.Value.Data)))
		dst = append(dst, e.Value.Data...)
	}
	return dst, nil
}

func checkHeader(e wire.Header) error {
	k, d := e.Value.Kind, e.Value.Data
	switch {
	case len(e.Key) == 0 || len(e.Key) > 255:
		return fmt.Errorf("%w: key of %d bytes, want 1..255", ErrBadHeader, len(e.Key))
	case k < wire.HeaderKindRaw || k > wire.HeaderKindDouble:
		return fmt.Errorf("%w: %q has unknown kind %d", ErrBadHeader, e.Key, uint8(k))
	case len(d) == 0 || len(d) > 255:
		return fmt.Errorf("%w: %q has a value of %d bytes, want 1..255", ErrBadHeader, e.Key, len(d))
	case k.FixedSize() != 0 && len(d) != k.FixedSize():
		return fmt.Errorf("%w: %q is a %s of %d bytes, want %d", ErrBadHeader, e.Key, k, len(d), k.FixedSize())
	}
	return nil
}

// countHeaders returns how many entries encoded user headers hold, so a
// batch's header lists can share one allocation; malformed bytes count 0.
func countHeaders(b []byte) int {
	n := 0
	for len(b) > 0 {
		rest, ok := skipField(b)
		if !ok {
			return 0
		}
		rest, ok = skipField(rest)
		if !ok {
			return 0
		}
		b = rest
		n++
	}
	return n
}

func skipField(b []byte) ([]byte, bool) {
	if len(b) < 5 {
		return nil, false
	}
	n := binary.LittleEndian.Uint32(b[1:5])
	if uint64(n) > uint64(len(b)-5) {
		return nil, false
	}
	return b[5+n:], true
}

// appendHeaders decodes encoded user headers (u8 kind, u32 length, bytes
// for the key, then the same for the value) onto dst. Keys of any kind
// become strings of their bytes; values keep their kind and alias b.
func appendHeaders(dst wire.Headers, b []byte) (wire.Headers, error) {
	return appendHeadersLike(dst, b, nil)
}

// appendHeadersLike is appendHeaders that takes each key string from like,
// the previous record's headers, when the key at the same place is the
// same: the records of a batch usually carry the same keys in the same
// order, and so no key of theirs is copied, not even one this package does
// not know.
func appendHeadersLike(dst wire.Headers, b []byte, like wire.Headers) (wire.Headers, error) {
	for i := 0; len(b) > 0; i++ {
		key, rest, err := headerField(b)
		if err != nil {
			return dst, fmt.Errorf("%w: key: %w", ErrBadHeader, err)
		}
		val, rest, err := headerField(rest)
		if err != nil {
			return dst, fmt.Errorf("%w: value of %q: %w", ErrBadHeader, key.Data, err)
		}
		var k string
		if i < len(like) && like[i].Key == string(key.Data) {
			k = like[i].Key
		} else {
			k = wirekey.Intern(key.Data)
		}
		dst = append(dst, wire.Header{Key: k, Value: val})
		b = rest
	}
	return dst, nil
}

func headerField(b []byte) (wire.HeaderValue, []byte, error) {
	if len(b) < 5 {
		return wire.HeaderValue{}, nil, errors.New("cut short")
	}
	kind := wire.HeaderKind(b[0])
	n := binary.LittleEndian.Uint32(b[1:5])
	switch {
	case kind < wire.HeaderKindRaw || kind > wire.HeaderKindDouble:
		return wire.HeaderValue{}, nil, fmt.Errorf("unknown kind %d", uint8(kind))
	case n < 1 || n > 255:
		return wire.HeaderValue{}, nil, fmt.Errorf("length %d, want 1..255", n)
	case int(n) > len(b)-5:
		return wire.HeaderValue{}, nil, errors.New("cut short")
	case kind.FixedSize() != 0 && int(n) != kind.FixedSize():
		return wire.HeaderValue{}, nil, fmt.Errorf("%s of %d bytes", kind, n)
	}
	return wire.HeaderValue{Kind: kind, Data: b[5 : 5+n : 5+n]}, b[5+n:], nil
}
