package iggytest

import (
	"encoding/binary"
	"strconv"

	"github.com/lasergo/laser/wire"
)

// reader walks a request payload. A read past the end sets bad instead of
// panicking, so a handler parses first and checks once (done).
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u8() uint8 {
	b := r.take(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) u32() uint32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) u64() uint64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// name reads a u8-length-prefixed string.
func (r *reader) name() string { return string(r.take(int(r.u8()))) }

// wireName reads a u8-length-prefixed string of 1..255 bytes.
func (r *reader) wireName() string {
	n := int(r.u8())
	if n == 0 {
		r.bad = true
	}
	return string(r.take(n))
}

// ident reads an Identifier: u8 kind (1 numeric, 2 string), u8 length, value.
func (r *reader) ident() ident {
	kind := r.u8()
	n := int(r.u8())
	v := r.take(n)
	if r.bad {
		return ident{}
	}
	switch {
	case kind == 1 && n == 4:
		return ident{numeric: true, id: binary.LittleEndian.Uint32(v), ok: true}
	case kind == 2 && n >= 1:
		return ident{name: string(v), ok: true}
	}
	return ident{}
}

// optPartition reads the optional partition: u8 flag (1 = set), u32 id.
func (r *reader) optPartition() (uint32, bool) {
	flag := r.u8()
	p := r.u32()
	return p, flag == 1
}

// done reports the parse outcome: errMalformed on a short payload or
// trailing bytes, which the SDK never sends.
func (r *reader) done() error {
	if r.bad || len(r.b) != 0 {
		return errMalformed
	}
	return nil
}

// ident is an Iggy Identifier: a numeric id or a name.
type ident struct {
	numeric bool
	id      uint32
	name    string
	ok      bool
}

func (i ident) String() string {
	if i.numeric {
		return strconv.FormatUint(uint64(i.id), 10)
	}
	return strconv.Quote(i.name)
}

// checkIdents rejects a request naming an invalid identifier.
func checkIdents(ids ...ident) error {
	for _, id := range ids {
		if !id.ok {
			return fail(StatusInvalidIdentifier, "invalid identifier")
		}
	}
	return nil
}

// Response builders: little-endian appends.

func putU8(b []byte, v uint8) []byte { return append(b, v) }

func putU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }

func putU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

func putName(b []byte, s string) []byte {
	b = append(b, uint8(len(s)))
	return append(b, s...)
}

// Limits of an options block, Iggy's.
const (
	maxOptions      = 1024
	maxOptionsBytes = 100_000
)

// checkOptions validates a VSR options block: user-header entries (u8 kind,
// u32 length, bytes, for the key and then the value) with string keys, each
// key once.
func checkOptions(b []byte) error {
	if len(b) > maxOptionsBytes {
		return fail(StatusInvalidCommand, "options block over 100 kB")
	}
	h, err := wire.ParseHeaders(b)
	if err != nil {
		return fail(StatusInvalidCommand, "malformed options: "+err.Error())
	}
	seen := make(map[string]bool)
	for key := range h.All() {
		if seen[key] {
			return fail(StatusInvalidCommand, "duplicate option key "+strconv.Quote(key))
		}
		if seen[key] = true; len(seen) > maxOptions {
			return fail(StatusInvalidCommand, "more than 1024 options")
		}
	}
	return nil
}

// putOptions appends a u32-prefixed options block.
func putOptions(b, opts []byte) []byte {
	b = putU32(b, uint32(len(opts)))
	return append(b, opts...)
}
