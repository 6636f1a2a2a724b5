package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"unsafe"
)

// ErrBadHeader reports user headers Iggy cannot carry or that do not parse:
// an empty or over-long key or value, an unknown kind, a key or value of a
// fixed-width kind of the wrong size, or bytes cut short.
var ErrBadHeader = errors.New("wire: invalid user header")

// HeaderError says where ParseHeaders found encoded headers bad: which
// entry, its key or its value, and at which byte. It matches ErrBadHeader.
type HeaderError struct {
	Entry  int    // the entry's index, from 0
	Key    bool   // the key is at fault; otherwise the value
	Name   string // the entry's key bytes, when the value is at fault
	Offset int    // where the faulty field starts in the parsed bytes
	Reason string // what is wrong, e.g. "double of 7 bytes, want 8"
}

// Error renders e.g. `wire: invalid user header: entry 0 key at byte 0:
// double of 7 bytes, want 8` or `... entry 1 value of "agdx.av" at byte 19: ...`.
func (e *HeaderError) Error() string {
	if e.Key {
		return fmt.Sprintf("%v: entry %d key at byte %d: %s", ErrBadHeader, e.Entry, e.Offset, e.Reason)
	}
	return fmt.Sprintf("%v: entry %d value of %q at byte %d: %s", ErrBadHeader, e.Entry, e.Name, e.Offset, e.Reason)
}

// Is makes every HeaderError match ErrBadHeader.
func (e *HeaderError) Is(target error) bool { return target == ErrBadHeader }

// headerEntryFraming is what one encoded entry costs beyond its key and
// value bytes: a kind byte and a u32 length for each.
const headerEntryFraming = 10

// EncodedHeaders are a record's user headers in Iggy's binary layout, read
// where they lie instead of decoded into a list per record: per entry the
// key (u8 kind, u32 little-endian length, bytes) and then the value (the
// same). Values of keys of any kind are looked up by the key's bytes.
//
// An EncodedHeaders is only made by ParseHeaders (which checks the bytes
// once) or by encoding a Headers list, so its accessors cannot fail. It
// views bytes its maker never writes again; the strings and values its
// accessors return alias them. The zero value holds no headers.
type EncodedHeaders struct {
	b []byte
}

// ParseHeaders checks b as encoded user headers, the way Iggy lays them
// out, and returns a view of it (b is not copied and must not be written
// afterwards). It is the one walk every reader of Iggy headers in this
// module runs. Iggy's servers (0.8 and 0.9) store user headers as opaque
// bytes, so whatever a producer sends reaches the consumer; the rule is
// therefore the one Iggy's own readers apply (iggy_common's
// user_headers_from_wire, the Go SDK's DeserializeHeaders): kinds 1..15,
// lengths 1..255, and a key, like a value, of a fixed-width kind exactly
// that kind's width. A failure is a *HeaderError.
func ParseHeaders(b []byte) (EncodedHeaders, error) {
	for rest, entry := b, 0; len(rest) > 0; entry++ {
		r, reason := checkField(rest)
		if reason != "" {
			return EncodedHeaders{}, &HeaderError{Entry: entry, Key: true, Offset: len(b) - len(rest), Reason: reason}
		}
		key := rest[5 : len(rest)-len(r)]
		if rest, reason = checkField(r); reason != "" {
			return EncodedHeaders{}, &HeaderError{Entry: entry, Name: string(key), Offset: len(b) - len(r), Reason: reason}
		}
	}
	if len(b) == 0 {
		return EncodedHeaders{}, nil
	}
	return EncodedHeaders{b: b[:len(b):len(b)]}, nil
}

// checkField checks one kind-length-bytes field, key or value alike, at
// the start of b and returns the rest, or why the field is bad.
func checkField(b []byte) ([]byte, string) {
	if len(b) < 5 {
		return nil, "cut short"
	}
	kind := HeaderKind(b[0])
	n := binary.LittleEndian.Uint32(b[1:5])
	switch {
	case kind < HeaderKindRaw || kind > HeaderKindDouble:
		return nil, fmt.Sprintf("unknown kind %d", uint8(kind))
	case n < 1 || n > HeaderValueMax:
		return nil, fmt.Sprintf("length %d, want 1..%d", n, HeaderValueMax)
	case int(n) > len(b)-5:
		return nil, "cut short"
	case kind.FixedSize() != 0 && int(n) != kind.FixedSize():
		return nil, fmt.Sprintf("%s of %d bytes, want %d", kind, n, kind.FixedSize())
	}
	return b[5+n:], ""
}

// nextEntry splits the first entry off checked bytes.
func nextEntry(b []byte) (key []byte, v HeaderValue, rest []byte) {
	n := binary.LittleEndian.Uint32(b[1:5])
	key, b = b[5:5+n:5+n], b[5+n:]
	kind := HeaderKind(b[0])
	n = binary.LittleEndian.Uint32(b[1:5])
	return key, HeaderValue{Kind: kind, Data: b[5 : 5+n : 5+n]}, b[5+n:]
}

// Encode checks h against what Iggy carries and encodes it, keys as String
// kind, values with their kind and bytes as they are.
func (h Headers) Encode() (EncodedHeaders, error) {
	if len(h) == 0 {
		return EncodedHeaders{}, nil
	}
	_, e, err := h.AppendEncoded(make([]byte, 0, h.EncodedLen()))
	return e, err
}

// MustEncodeHeaders is Headers.Encode for headers known to be valid (tests,
// constants); it panics on an error.
func MustEncodeHeaders(h Headers) EncodedHeaders {
	e, err := h.Encode()
	if err != nil {
		panic(err)
	}
	return e
}

// EncodedLen is how many bytes AppendEncoded writes for h.
func (h Headers) EncodedLen() int {
	n := 0
	for _, e := range h {
		n += headerEntryFraming + len(e.Key) + len(e.Value.Data)
	}
	return n
}

// AppendEncoded checks h against what Iggy carries and appends its
// encoding to dst, so one buffer can serve a whole batch. It returns the
// extended buffer and a view of what it appended; on an error, dst as it
// was.
func (h Headers) AppendEncoded(dst []byte) ([]byte, EncodedHeaders, error) {
	start := len(dst)
	for _, e := range h {
		if err := checkHeader(e); err != nil {
			return dst[:start], EncodedHeaders{}, err
		}
		dst = append(dst, byte(HeaderKindString))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.Key)))
		dst = append(dst, e.Key...)
		dst = append(dst, byte(e.Value.Kind))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(e.Value.Data)))
		dst = append(dst, e.Value.Data...)
	}
	if len(dst) == start {
		return dst, EncodedHeaders{}, nil
	}
	return dst, EncodedHeaders{b: dst[start:len(dst):len(dst)]}, nil
}

func checkHeader(e Header) error {
	k, d := e.Value.Kind, e.Value.Data
	switch {
	case len(e.Key) == 0 || len(e.Key) > HeaderValueMax:
		return fmt.Errorf("%w: key of %d bytes, want 1..%d", ErrBadHeader, len(e.Key), HeaderValueMax)
	case k < HeaderKindRaw || k > HeaderKindDouble:
		return fmt.Errorf("%w: %q has unknown kind %d", ErrBadHeader, e.Key, uint8(k))
	case len(d) == 0 || len(d) > HeaderValueMax:
		return fmt.Errorf("%w: %q has a value of %d bytes, want 1..%d", ErrBadHeader, e.Key, len(d), HeaderValueMax)
	case k.FixedSize() != 0 && len(d) != k.FixedSize():
		return fmt.Errorf("%w: %q is a %s of %d bytes, want %d", ErrBadHeader, e.Key, k, len(d), k.FixedSize())
	}
	return nil
}

// Bytes returns the encoded headers as they travel (nil for none); the
// caller must not write them.
func (h EncodedHeaders) Bytes() []byte { return h.b }

// Size is the byte count of the encoded headers.
func (h EncodedHeaders) Size() int { return len(h.b) }

// Len returns how many headers there are.
func (h EncodedHeaders) Len() int {
	n := 0
	for b := h.b; len(b) > 0; n++ {
		_, _, b = nextEntry(b)
	}
	return n
}

// Get returns the value of the first header named key; its Data aliases
// the encoded bytes.
func (h EncodedHeaders) Get(key string) (HeaderValue, bool) {
	for b := h.b; len(b) > 0; {
		k, v, rest := nextEntry(b)
		if string(k) == key {
			return v, true
		}
		b = rest
	}
	return HeaderValue{}, false
}

// Has reports whether a header named key is present.
func (h EncodedHeaders) Has(key string) bool {
	_, ok := h.Get(key)
	return ok
}

// All yields the headers in order; keys and values alias the encoded bytes.
func (h EncodedHeaders) All() iter.Seq2[string, HeaderValue] {
	return func(yield func(string, HeaderValue) bool) {
		for b := h.b; len(b) > 0; {
			k, v, rest := nextEntry(b)
			if !yield(unsafe.String(unsafe.SliceData(k), len(k)), v) {
				return
			}
			b = rest
		}
	}
}

// Decode returns the headers as a list of their own (copied), for a caller
// that edits them, say to republish a record with one header changed.
func (h EncodedHeaders) Decode() Headers {
	if len(h.b) == 0 {
		return nil
	}
	out := make(Headers, 0, h.Len())
	for b := h.b; len(b) > 0; {
		k, v, rest := nextEntry(b)
		out = append(out, Header{Key: string(k), Value: HeaderValue{Kind: v.Kind, Data: append([]byte(nil), v.Data...)}})
		b = rest
	}
	return out
}

// AppendTo appends the encoded bytes to dst and returns the extended buffer
// and a view of the copy, so a store can keep many records' headers in one
// allocation.
func (h EncodedHeaders) AppendTo(dst []byte) ([]byte, EncodedHeaders) {
	if len(h.b) == 0 {
		return dst, EncodedHeaders{}
	}
	start := len(dst)
	dst = append(dst, h.b...)
	return dst, EncodedHeaders{b: dst[start:len(dst):len(dst)]}
}

// Clone returns a copy that shares no bytes with h.
func (h EncodedHeaders) Clone() EncodedHeaders {
	if len(h.b) == 0 {
		return EncodedHeaders{}
	}
	return EncodedHeaders{b: append([]byte(nil), h.b...)}
}

// Equal reports whether h and o hold the same headers in the same order.
func (h EncodedHeaders) Equal(o EncodedHeaders) bool { return string(h.b) == string(o.b) }

// String renders the headers as key=value pairs for logs and tools.
func (h EncodedHeaders) String() string {
	out := make([]byte, 0, 2+len(h.b))
	out = append(out, '[')
	first := true
	for k, v := range h.All() {
		if !first {
			out = append(out, ' ')
		}
		first = false
		out = append(out, k...)
		out = append(out, '=')
		out = append(out, v.String()...)
	}
	return string(append(out, ']'))
}
