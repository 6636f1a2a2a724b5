package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ID is a 128-bit AGDX identifier (record, conversation, correlation, channel)
// held as its 16 big-endian bytes, which is also its CBOR payload form.
type ID [16]byte

// The four envelope id roles share one codec; the aliases document intent at
// use sites without forcing conversions between them.
type (
	// RecordID names one envelope on the log.
	RecordID = ID
	// ConversationID groups every message of one conversation (and its partition).
	ConversationID = ID
	// CorrelationID pairs a request with its reply.
	CorrelationID = ID
	// ChannelID names one chunk stream.
	ChannelID = ID
)

// crockford is the ULID alphabet: Crockford base32 without I, L, O and U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// IDTextLen is the length of an id's Crockford text form.
const IDTextLen = 26

// errBadID reports an id text that is not 26 valid Crockford characters.
var errBadID = errors.New("wire: invalid id text")

var crockfordIndex = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(crockford); i++ {
		t[crockford[i]] = int8(i)
		if c := crockford[i]; c >= 'A' && c <= 'Z' {
			t[c+('a'-'A')] = int8(i)
		}
	}
	return t
}()

// IDFromUint128 builds an id from the high and low 64-bit halves of its value.
func IDFromUint128(hi, lo uint64) ID {
	var id ID
	binary.BigEndian.PutUint64(id[:8], hi)
	binary.BigEndian.PutUint64(id[8:], lo)
	return id
}

// Uint128 returns the high and low halves of the id's value.
func (id ID) Uint128() (hi, lo uint64) {
	return binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])
}

// IsZero reports whether every bit of the id is zero.
func (id ID) IsZero() bool { return id == ID{} }

// String renders the id as 26 upper-case Crockford characters (the ULID form),
// which is also the partition key of its conversation.
func (id ID) String() string {
	var buf [IDTextLen]byte
	id.appendText(buf[:0])
	return string(buf[:])
}

// AppendText appends the 26-character Crockford form of the id to b.
func (id ID) AppendText(b []byte) ([]byte, error) { return id.appendText(b), nil }

// MarshalText implements encoding.TextMarshaler with the Crockford form.
func (id ID) MarshalText() ([]byte, error) { return id.appendText(nil), nil }

// UnmarshalText implements encoding.TextUnmarshaler with the Crockford form.
func (id *ID) UnmarshalText(b []byte) error {
	parsed, err := parseID(b)
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}

func (id ID) appendText(b []byte) []byte {
	hi, lo := id.Uint128()
	var out [IDTextLen]byte
	// Take five bits at a time from the least-significant end; the first
	// character is left with the top three bits.
	for i := IDTextLen - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return append(b, out[:]...)
}

// ParseID parses the 26-character Crockford form; lower case is accepted, the
// Crockford aliases I, L, O and U are not (the reference rejects them too).
func ParseID(s string) (ID, error) { return parseID([]byte(s)) }

func parseID(s []byte) (ID, error) {
	if len(s) != IDTextLen {
		return ID{}, fmt.Errorf("%w: %q has %d characters, want %d", errBadID, s, len(s), IDTextLen)
	}
	// Fast path: the 130 bits of text as 10 + 60 + 60, three independent
	// runs rather than one 128-bit shift chain; any bad digit (a negative
	// index) or overflow falls through to the loop below for its error.
	a, bad0 := crockfordRun(s[:2])
	b, bad1 := crockfordRun(s[2:14])
	c, bad2 := crockfordRun(s[14:])
	if bad0|bad1|bad2 >= 0 && a < 1<<8 {
		return IDFromUint128(a<<56|b>>4, b<<60|c), nil
	}
	var hi, lo uint64
	for i, c := range s {
		v := crockfordIndex[c]
		if v < 0 {
			return ID{}, fmt.Errorf("%w: %q has %q at %d", errBadID, s, c, i)
		}
		if i == 0 && v > 7 {
			return ID{}, fmt.Errorf("%w: %q overflows 128 bits", errBadID, s)
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	return IDFromUint128(hi, lo), nil
}

// crockfordRun accumulates up to 12 Crockford digits; bad is negative when
// one of them is not a digit (then x is meaningless).
func crockfordRun(p []byte) (x uint64, bad int8) {
	for _, c := range p {
		v := crockfordIndex[c]
		bad |= v
		x = x<<5 | uint64(v)
	}
	return x, bad
}

// NewULID builds a ULID-shaped id: 48 bits of Unix milliseconds followed by 80
// bits of entropy, the shape the reference mints.
func NewULID(unixMilli uint64, entropy [10]byte) ID {
	var id ID
	id[0] = byte(unixMilli >> 40)
	id[1] = byte(unixMilli >> 32)
	id[2] = byte(unixMilli >> 24)
	id[3] = byte(unixMilli >> 16)
	id[4] = byte(unixMilli >> 8)
	id[5] = byte(unixMilli)
	copy(id[6:], entropy[:])
	return id
}
