package wire

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
	"unsafe"
)

// The AGDX codec is written for its format rather than reflection-driven:
// the envelope is the hot path, and the reference's byte form
// (declaration-order text keys, skipped absent fields, shortest floats,
// bytewise-sorted metadata) is easier to pin exactly with explicit appends
// than with encoder options. This file holds the CBOR primitives; records
// are decoded by their field tables (fields.go).

// CBOR major types, pre-shifted into the head byte.
const (
	majorUint   byte = 0 << 5
	majorNeg    byte = 1 << 5
	majorBytes  byte = 2 << 5
	majorText   byte = 3 << 5
	majorArray  byte = 4 << 5
	majorMap    byte = 5 << 5
	majorTag    byte = 6 << 5
	majorSimple byte = 7 << 5
)

const (
	cborFalse     byte = 0xf4
	cborTrue      byte = 0xf5
	cborNull      byte = 0xf6
	cborUndefined byte = 0xf7
	cborFloat16   byte = 0xf9
	cborFloat32   byte = 0xfa
	cborFloat64   byte = 0xfb
	cborBreak     byte = 0xff
)

// MaxNestingDepth is the deepest container nesting the decoders accept, the
// reference decoder's recursion limit.
const MaxNestingDepth = 256

// ErrDecode matches every decoding failure of this package (errors.Is).
var ErrDecode = errors.New("wire: decode failed")

// errTrailingBytes reports input that holds more than one CBOR data item.
var errTrailingBytes = errors.New("wire: trailing bytes after the CBOR value")

// errMalformed reports input that is not well-formed CBOR.
var errMalformed = errors.New("wire: malformed CBOR")

// The shapes the reference accepts and this package refuses on purpose
// (docs/wire.md), each its own error so the differential test can tell a
// documented refusal from a disagreement; the fourth is
// errDuplicateMetadataKey.
var (
	errTwoByteSimple = fmt.Errorf("%w: a simple value below 32 in two bytes (RFC 8949 §3.3)", errMalformed)
	errNestedChunk   = fmt.Errorf("%w: an indefinite string's chunk is itself indefinite (RFC 8949 §3.2.3)", errMalformed)
	// errAmbiguousEnum: an enum in a form the reference reads by leaving
	// part of it in the stream, to be read as what follows: a map for a
	// unit enum (kind, content type), a bare name for one with data (a
	// content ref).
	errAmbiguousEnum = fmt.Errorf("%w: an enum in a form the reference reads ambiguously", errMalformed)
)

// DecodeError locates a decoding failure: which type, which field (empty for
// the value itself) and the input offset where it was detected.
type DecodeError struct {
	Type   string
	Field  string
	Offset int
	Err    error
}

// Error renders e.g. `wire: decode envelope: field "source" at byte 34: invalid agent id: empty`.
func (e *DecodeError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("wire: decode %s at byte %d: %v", e.Type, e.Offset, e.Err)
	}
	return fmt.Sprintf("wire: decode %s: field %q at byte %d: %v", e.Type, e.Field, e.Offset, e.Err)
}

// Unwrap exposes the cause, such as an invalid agent id or an unknown kind.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is makes every DecodeError match ErrDecode.
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// ---- encoding ----

// appendHead appends the shortest head for major type m and argument n.
func appendHead(b []byte, m byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(b, m|byte(n))
	case n <= math.MaxUint8:
		return append(b, m|24, byte(n))
	case n <= math.MaxUint16:
		return append(b, m|25, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(b, m|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, m|27, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendText(b []byte, s string) []byte {
	b = appendHead(b, majorText, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, p []byte) []byte {
	b = appendHead(b, majorBytes, uint64(len(p)))
	return append(b, p...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, cborTrue)
	}
	return append(b, cborFalse)
}

func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		return appendHead(b, majorNeg, uint64(^v))
	}
	return appendHead(b, majorUint, uint64(v))
}

// appendFloat writes the shortest of f16, f32 and f64 that converts back to
// the identical f64 bits, the reference encoder's rule (NaNs narrow only when
// quiet and their dropped payload bits are zero, as the reference's
// conversions behave).
func appendFloat(b []byte, f float64) []byte {
	bits := math.Float64bits(f)
	if s, ok := float32Exact(bits); ok {
		if h, ok := float16Exact(s); ok {
			return append(b, cborFloat16, byte(h>>8), byte(h))
		}
		return append(b, cborFloat32, byte(s>>24), byte(s>>16), byte(s>>8), byte(s))
	}
	return append(b, cborFloat64, byte(bits>>56), byte(bits>>48), byte(bits>>40), byte(bits>>32), byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits))
}

// float32Exact returns the f32 bits that widen back to exactly bits.
func float32Exact(bits uint64) (uint32, bool) {
	sign := uint32(bits>>32) & 0x8000_0000
	exp := (bits >> 52) & 0x7ff
	mant := bits & (1<<52 - 1)
	if exp == 0x7ff {
		if mant == 0 {
			return sign | 0x7f80_0000, true
		}
		if mant&(1<<51) == 0 || mant&(1<<29-1) != 0 {
			return 0, false
		}
		return sign | 0x7f80_0000 | uint32(mant>>29), true
	}
	f := math.Float64frombits(bits)
	s := float32(f)
	if math.Float64bits(float64(s)) != bits {
		return 0, false
	}
	return math.Float32bits(s), true
}

// float16Exact returns the f16 bits that widen back to exactly the f32 s.
func float16Exact(s uint32) (uint16, bool) {
	sign := uint16(s>>16) & 0x8000
	exp := int((s >> 23) & 0xff)
	mant := s & (1<<23 - 1)
	switch {
	case exp == 0xff:
		if mant == 0 {
			return sign | 0x7c00, true
		}
		if mant&(1<<13-1) != 0 {
			return 0, false
		}
		return sign | 0x7c00 | uint16(mant>>13), true
	case exp == 0 && mant == 0:
		return sign, true
	case exp == 0:
		return 0, false // f32 subnormals are far below the f16 range
	}
	e := exp - 127
	switch {
	case e >= -14 && e <= 15:
		if mant&(1<<13-1) != 0 {
			return 0, false
		}
		return sign | uint16(e+15)<<10 | uint16(mant>>13), true
	case e >= -24 && e < -14:
		full := mant | 1<<23
		shift := uint(-e - 1)
		if full&(1<<shift-1) != 0 {
			return 0, false
		}
		return sign | uint16(full>>shift), true
	}
	return 0, false
}

// quietBit is the f64 mantissa bit that makes a NaN quiet.
const quietBit = 1 << 51

// float16ToFloat64 widens f16 bits as the reference does (and x86 and ARM
// hardware): a NaN keeps its payload and becomes quiet, so a signaling
// f16 NaN re-encodes as the quiet f16 with the same payload.
func float16ToFloat64(h uint16) float64 {
	sign := uint64(h&0x8000) << 48
	exp := uint64(h>>10) & 0x1f
	mant := uint64(h & 0x3ff)
	switch {
	case exp == 0x1f && mant == 0:
		return math.Float64frombits(sign | 0x7ff0_0000_0000_0000)
	case exp == 0x1f:
		return math.Float64frombits(sign | 0x7ff0_0000_0000_0000 | quietBit | mant<<42)
	case exp == 0:
		v := math.Ldexp(float64(mant), -24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float64frombits(sign | (exp-15+1023)<<52 | mant<<42)
}

// float32ToFloat64 widens f32 bits, a NaN quieted with its payload kept as
// float16ToFloat64 does; spelled out in bits so no platform's conversion
// can differ.
func float32ToFloat64(s uint32) float64 {
	if s&0x7f80_0000 == 0x7f80_0000 && s&0x7f_ffff != 0 {
		return math.Float64frombits(uint64(s&0x8000_0000)<<32 | 0x7ff0_0000_0000_0000 | quietBit | uint64(s&0x7f_ffff)<<29)
	}
	return float64(math.Float32frombits(s))
}

// ---- decoding ----

// reader walks one CBOR buffer, reading each field as the reference's
// decoder (serde over ciborium) reads a field of that type: lenient where it
// is (tags before most items are skipped, indefinite lengths and
// non-shortest heads are accepted, bignums read as integers) and strict
// where it is (no tags before byte fields or metadata values, definite
// strings for ids and field names, each text chunk UTF-8, nesting capped
// with tags counted). docs/wire.md lists where it is stricter still.
type reader struct {
	b     []byte
	i     int
	depth int
	// fieldKey is the range of b holding the name of the struct field
	// being decoded, for error messages (empty when none is).
	fieldKey struct{ start, end int }
	// copied, when set, is a copy of b, and src the same bytes as a string:
	// decoded text becomes substrings of src and byte strings subslices of
	// copied, so one allocation serves every field. span is the input range
	// of the last definite string read (start -1 after an indefinite one).
	copied    []byte
	src       string
	spanStart int
	spanEnd   int
}

// maxSharedSource bounds the input size whose text is shared through one
// string copy; a larger input (a big body) would otherwise be kept alive,
// and copied, for the sake of a few short strings.
const maxSharedSource = 4 << 10

// newReader returns a reader over b; shareText enables the one-copy arena
// for small inputs.
//
// The arena is one copy of the input that text fields are substrings of and
// byte-string fields subslices of. A decoded byte string (an envelope body)
// may be edited by its owner: it is cut with its capacity at its end, and
// no text field lies within its bytes (CBOR items do not overlap), so no
// string ever sees the edit.
func newReader(b []byte, shareText bool) reader {
	r := reader{b: b}
	if shareText && len(b) <= maxSharedSource && len(b) > 0 {
		r.copied = append(make([]byte, 0, len(b)), b...)
		r.src = unsafe.String(unsafe.SliceData(r.copied), len(r.copied))
	}
	return r
}

func (r *reader) errf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errMalformed}, args...)...)
}

// head reads one head. For majors 2..5 indefinite reports additional info 31.
// Tags are returned like any other head; use item to skip them.
func (r *reader) head() (major byte, arg uint64, indef bool, err error) {
	if r.i >= len(r.b) {
		return 0, 0, false, r.errf("unexpected end of input")
	}
	ib := r.b[r.i]
	r.i++
	major = ib & 0xe0
	ai := ib & 0x1f
	switch {
	case ai < 24:
		return major, uint64(ai), false, nil
	case ai <= 27:
		n := 1 << (ai - 24)
		if len(r.b)-r.i < n {
			return 0, 0, false, r.errf("unexpected end of input in a head")
		}
		for _, c := range r.b[r.i : r.i+n] {
			arg = arg<<8 | uint64(c)
		}
		r.i += n
		if major == majorSimple && ai == 24 && arg < 32 {
			return 0, 0, false, fmt.Errorf("%w: %d", errTwoByteSimple, arg)
		}
		return major, arg, false, nil
	case ai == 31:
		switch major {
		case majorBytes, majorText, majorArray, majorMap:
			return major, 0, true, nil
		}
		if major == majorSimple {
			return 0, 0, false, r.errf("unexpected break")
		}
	}
	return 0, 0, false, r.errf("reserved additional information %d", ai)
}

// item reads the head of the next data item, skipping any tags before it.
func (r *reader) item() (major byte, arg uint64, indef bool, err error) {
	for {
		major, arg, indef, err = r.head()
		if err != nil || major != majorTag {
			return major, arg, indef, err
		}
	}
}

// skipTags advances past tags so the next byte is the item's own head.
func (r *reader) skipTags() error {
	for r.i < len(r.b) && r.b[r.i]&0xe0 == majorTag {
		if _, _, _, err := r.head(); err != nil {
			return err
		}
	}
	return nil
}

// absent consumes a null or undefined and reports whether it did: the
// reference reads both as a missing optional value. Behind a tag they are
// not absent: the field's own reader then skips the tag and refuses the
// null, as the reference's does.
func (r *reader) absent() (bool, error) {
	if r.i < len(r.b) && (r.b[r.i] == cborNull || r.b[r.i] == cborUndefined) {
		r.i++
		return true, nil
	}
	return false, nil
}

// atBreak consumes a break byte when it is next.
func (r *reader) atBreak() bool {
	if r.i < len(r.b) && r.b[r.i] == cborBreak {
		r.i++
		return true
	}
	return false
}

func (r *reader) remaining() uint64 { return uint64(len(r.b) - r.i) }

func majorName(m byte) string {
	return [...]string{"unsigned integer", "negative integer", "byte string", "text string", "array", "map", "tag", "simple value or float"}[m>>5]
}

func (r *reader) want(got, want byte) error {
	if got != want {
		return fmt.Errorf("%w: got %s, want %s", errMalformed, majorName(got), majorName(want))
	}
	return nil
}

// Bignum tags (RFC 8949 §3.4.3): the byte string after one is an integer.
const (
	tagPositiveBignum = 2
	tagNegativeBignum = 3
)

// maxBignumBytes is the widest bignum the reference reads (a u128), leading
// zero bytes not counted.
const maxBignumBytes = 16

// uint reads an unsigned integer no larger than max: a plain one or a
// positive bignum, after any other tags.
func (r *reader) uint(max uint64) (uint64, error) {
	for {
		m, v, _, err := r.head()
		if err != nil {
			return 0, err
		}
		switch m {
		case majorTag:
			if v != tagPositiveBignum && v != tagNegativeBignum {
				continue
			}
			v, err = r.bignum(v == tagNegativeBignum)
			if err != nil {
				return 0, err
			}
		case majorUint:
		case majorNeg:
			return 0, fmt.Errorf("%w: a negative integer, want an unsigned one", errMalformed)
		default:
			return 0, r.want(m, majorUint)
		}
		if v > max {
			return 0, fmt.Errorf("%w: %d is out of range (max %d)", errMalformed, v, max)
		}
		return v, nil
	}
}

// bignum reads the byte string after a bignum tag as an unsigned value. It
// must follow the tag directly; a negative bignum, or one past 64 bits, is
// out of any field's range.
func (r *reader) bignum(negative bool) (uint64, error) {
	if r.i >= len(r.b) || r.b[r.i]&0xe0 != majorBytes {
		return 0, r.errf("a bignum tag must precede a byte string")
	}
	p, err := r.str(majorBytes)
	if err != nil {
		return 0, err
	}
	for len(p) > 0 && p[0] == 0 {
		p = p[1:]
	}
	switch {
	case len(p) > maxBignumBytes:
		return 0, r.errf("bignum of %d bytes, max %d", len(p), maxBignumBytes)
	case negative:
		return 0, fmt.Errorf("%w: a negative integer, want an unsigned one", errMalformed)
	case len(p) > 8:
		return 0, fmt.Errorf("%w: bignum of %d bytes is out of range", errMalformed, len(p))
	}
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

func (r *reader) bool() (bool, error) {
	if err := r.skipTags(); err != nil {
		return false, err
	}
	if r.i < len(r.b) {
		switch r.b[r.i] {
		case cborFalse:
			r.i++
			return false, nil
		case cborTrue:
			r.i++
			return true, nil
		case majorSimple | 24:
			if _, _, _, err := r.head(); err != nil {
				return false, err
			}
		}
	}
	return false, r.errf("want a bool")
}

// str reads a string of major m (bytes or text). A definite string aliases
// the input; an indefinite one is concatenated into a fresh slice.
func (r *reader) str(m byte) ([]byte, error) {
	// Fast path: a definite string whose length fits in its head byte (every
	// struct key, id and most short text), read without the general head
	// decoding. Anything else, including every error, takes the path below.
	if r.i < len(r.b) {
		if ib := r.b[r.i]; ib&0xe0 == m && ib&0x1f < 24 {
			start, end := r.i+1, r.i+1+int(ib&0x1f)
			if end <= len(r.b) {
				r.spanStart, r.spanEnd = start, end
				r.i = end
				return r.b[start:end:end], nil
			}
		}
	}
	got, n, indef, err := r.item()
	if err != nil {
		return nil, err
	}
	if err := r.want(got, m); err != nil {
		return nil, err
	}
	if !indef {
		return r.take(n)
	}
	var out []byte
	for !r.atBreak() {
		cm, cn, cindef, err := r.head()
		if err != nil {
			return nil, err
		}
		if cm == m && cindef {
			return nil, errNestedChunk
		}
		if cm != m {
			return nil, r.errf("indefinite string chunk is not a definite %s", majorName(m))
		}
		chunk, err := r.take(cn)
		if err != nil {
			return nil, err
		}
		if m == majorText && !validUTF8(chunk) {
			// RFC 8949 §3.2.3: each chunk is valid UTF-8 on its own, so a
			// character split across two chunks is an error.
			return nil, r.errf("a chunk of an indefinite text string is not valid UTF-8")
		}
		out = append(out, chunk...)
	}
	// The joined text is not one span of the source: intern must copy it
	// rather than slice out the last chunk take recorded.
	r.spanStart = -1
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

func (r *reader) take(n uint64) ([]byte, error) {
	if n > r.remaining() {
		return nil, r.errf("string of %d bytes runs past the end of input", n)
	}
	p := r.b[r.i : r.i+int(n) : r.i+int(n)]
	r.spanStart, r.spanEnd = r.i, r.i+int(n)
	r.i += int(n)
	return p, nil
}

// text reads a UTF-8 text string (aliasing the input when definite).
func (r *reader) text() ([]byte, error) {
	p, err := r.str(majorText)
	if err != nil {
		return nil, err
	}
	if !validUTF8(p) {
		return nil, fmt.Errorf("%w: text is not valid UTF-8", errMalformed)
	}
	return p, nil
}

// validUTF8 is utf8.Valid with a byte loop over the ASCII prefix first,
// cheaper for the short, mostly ASCII text of an envelope (keys, agent
// ids, operations). An all-ASCII prefix does not change validity, so the
// rest alone is checked.
func validUTF8(p []byte) bool {
	for i, c := range p {
		if c >= utf8.RuneSelf {
			return utf8.Valid(p[i:])
		}
	}
	return true
}

// validUTF8String is validUTF8 for a string.
func validUTF8String(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.ValidString(s[i:])
		}
	}
	return true
}

func (r *reader) string() (string, error) {
	p, err := r.text()
	if err != nil {
		return "", err
	}
	return r.intern(p), nil
}

// intern returns p, just read by text, as a string: a substring of the
// shared source when there is one and p was a definite string.
func (r *reader) intern(p []byte) string {
	if r.src != "" && r.spanStart >= 0 {
		return r.src[r.spanStart:r.spanEnd]
	}
	return string(p)
}

// binBytes reads a bin_bytes field: a byte string, or an array of u8 as the
// JSON view writes it, with no tag before either (the reference reads the
// field as any item, and a tagged item is none it takes). The result is a
// fresh copy (or the arena's, see newReader), never aliasing the input;
// empty input yields nil so that decode and re-encode agree on "absent".
func (r *reader) binBytes() ([]byte, error) {
	if r.i < len(r.b) && r.b[r.i]&0xe0 == majorTag {
		return nil, r.errf("a tag before a byte field")
	}
	if r.i < len(r.b) && r.b[r.i]&0xe0 == majorArray {
		_, n, indef, err := r.head()
		if err != nil {
			return nil, err
		}
		if !indef && n > r.remaining() {
			return nil, r.errf("array of %d items runs past the end of input", n)
		}
		var out []byte
		if !indef && n > 0 {
			out = make([]byte, 0, n)
		}
		for i := uint64(0); indef || i < n; i++ {
			if indef && r.atBreak() {
				break
			}
			v, err := r.uint(math.MaxUint8)
			if err != nil {
				return nil, err
			}
			out = append(out, byte(v))
		}
		return out, nil
	}
	p, err := r.str(majorBytes)
	if err != nil || len(p) == 0 {
		return nil, err
	}
	if r.copied != nil && r.spanStart >= 0 {
		return r.copied[r.spanStart:r.spanEnd:r.spanEnd], nil
	}
	return append([]byte(nil), p...), nil
}

// id reads a 16-byte wire id; any other length or shape is an error.
func (r *reader) id() (ID, error) {
	p, err := r.definite(majorBytes)
	if err != nil {
		return ID{}, err
	}
	if len(p) != len(ID{}) {
		return ID{}, fmt.Errorf("%w: id is %d bytes, want 16", errMalformed, len(p))
	}
	return ID(p), nil
}

// container reads an array or map head of major m and enters one nesting
// level. For an indefinite container n is meaningless; iterate with next.
func (r *reader) container(m byte) (n uint64, indef bool, err error) {
	got, n, indef, err := r.item()
	if err != nil {
		return 0, false, err
	}
	if err := r.want(got, m); err != nil {
		return 0, false, err
	}
	per := uint64(1)
	if m == majorMap {
		per = 2
	}
	if !indef && n > r.remaining()/per {
		return 0, false, r.errf("%s of %d items runs past the end of input", majorName(m), n)
	}
	r.depth++
	if r.depth > MaxNestingDepth {
		return 0, false, r.errf("nesting deeper than %d", MaxNestingDepth)
	}
	return n, indef, nil
}

// next reports whether another entry follows in a container opened by
// container; i counts the entries consumed so far.
func (r *reader) next(i, n uint64, indef bool) bool {
	if indef {
		return !r.atBreak()
	}
	return i < n
}

func (r *reader) leave() { r.depth-- }

// maxIdentifierBytes bounds a struct key or kind: the reference reads
// identifiers through a 4 KiB scratch buffer, so only a definite string
// that fits it.
const maxIdentifierBytes = 4 << 10

// definite reads, after any tags, one definite string of major m no longer
// than maxIdentifierBytes (UTF-8 when text): how the reference reads ids,
// log positions, struct keys and the kind.
func (r *reader) definite(m byte) ([]byte, error) {
	if err := r.skipTags(); err != nil {
		return nil, err
	}
	if r.i < len(r.b) && r.b[r.i] == m|31 {
		return nil, r.errf("an indefinite-length %s where a definite one is required", majorName(m))
	}
	p, err := r.str(m)
	if err != nil {
		return nil, err
	}
	if len(p) > maxIdentifierBytes {
		return nil, r.errf("%s of %d bytes, max %d", majorName(m), len(p), maxIdentifierBytes)
	}
	if m == majorText && !validUTF8(p) {
		return nil, fmt.Errorf("%w: text is not valid UTF-8", errMalformed)
	}
	return p, nil
}

// key reads a struct field name: definite text, or a definite byte string
// as the reference also lets through. Integer keys are an error.
func (r *reader) key() ([]byte, error) {
	if err := r.skipTags(); err != nil {
		return nil, err
	}
	if r.i < len(r.b) && r.b[r.i]&0xe0 == majorBytes {
		return r.definite(majorBytes)
	}
	if r.i < len(r.b) && r.b[r.i]&0xe0 != majorText {
		return nil, r.errf("struct key is a %s, want a text string", majorName(r.b[r.i]&0xe0))
	}
	return r.definite(majorText)
}

// skip consumes one well-formed data item of any shape (an unknown field's
// value) as the reference skips one: the nesting cap counts each tag as a
// level (bignums of up to 16 bytes aside, read as integers), text must be
// UTF-8, and simple values other than false, true, null and undefined are
// refused.
func (r *reader) skip() error {
	if r.i >= len(r.b) {
		return r.errf("unexpected end of input")
	}
	ib := r.b[r.i]
	switch m := ib & 0xe0; m {
	case majorTag:
		_, tag, _, err := r.head()
		if err != nil {
			return err
		}
		if tag == tagPositiveBignum || tag == tagNegativeBignum {
			if done, err := r.skipBignum(tag == tagNegativeBignum); done {
				return err
			}
		}
		r.depth++
		if r.depth > MaxNestingDepth {
			return r.errf("nesting deeper than %d", MaxNestingDepth)
		}
		err = r.skip()
		r.depth--
		return err
	case majorBytes:
		_, err := r.str(majorBytes)
		return err
	case majorText:
		_, err := r.text()
		return err
	case majorArray, majorMap:
		n, indef, err := r.container(m)
		if err != nil {
			return err
		}
		per := 1
		if m == majorMap {
			per = 2
		}
		for i := uint64(0); r.next(i, n, indef); i++ {
			for k := 0; k < per; k++ {
				if err := r.skip(); err != nil {
					return err
				}
			}
		}
		r.leave()
		return nil
	case majorSimple:
		switch ib {
		case cborFalse, cborTrue, cborNull, cborUndefined, cborFloat16, cborFloat32, cborFloat64:
			_, _, _, err := r.head()
			return err
		case majorSimple | 24:
			_, v, _, err := r.head() // errTwoByteSimple below 32
			if err == nil {
				err = r.errf("unassigned simple value %d", v)
			}
			return err
		case cborBreak:
			return r.errf("unexpected break")
		}
		if ib&0x1f < 24 {
			return r.errf("unassigned simple value %d", ib&0x1f)
		}
		_, _, _, err := r.head()
		return err
	default:
		_, _, _, err := r.head()
		return err
	}
}

// skipBignum skips the byte string after a bignum tag when the reference
// reads it as an integer (a definite string of up to 16 bytes) and reports
// whether it did; a negative one must fit an i128. Any other item after
// the tag is skipped as a tagged item.
func (r *reader) skipBignum(negative bool) (bool, error) {
	if r.i >= len(r.b) || r.b[r.i]&0xe0 != majorBytes || r.b[r.i] == majorBytes|31 {
		return false, nil
	}
	save := r.i
	_, n, _, err := r.head()
	if err != nil || n > maxBignumBytes {
		r.i = save
		return false, nil
	}
	p, err := r.take(n)
	if err != nil {
		return true, err
	}
	for len(p) > 0 && p[0] == 0 {
		p = p[1:]
	}
	if negative && len(p) == maxBignumBytes && p[0]&0x80 != 0 {
		return true, r.errf("negative bignum below the i128 range")
	}
	return true, nil
}

// float reads any CBOR float width as an f64.
func (r *reader) float() (float64, error) {
	if err := r.skipTags(); err != nil {
		return 0, err
	}
	if r.i >= len(r.b) {
		return 0, r.errf("unexpected end of input")
	}
	start := r.b[r.i]
	m, v, _, err := r.head()
	if err != nil {
		return 0, err
	}
	if m != majorSimple {
		return 0, r.want(m, majorSimple)
	}
	switch start {
	case cborFloat16:
		return float16ToFloat64(uint16(v)), nil
	case cborFloat32:
		return float32ToFloat64(uint32(v)), nil
	case cborFloat64:
		return math.Float64frombits(v), nil
	}
	return 0, r.errf("want a float")
}

// finish wraps a decoding failure of typ with its location, and rejects
// trailing bytes after a successful decode.
func (r *reader) finish(typ string, err error) error {
	if err == nil && r.i != len(r.b) {
		err = fmt.Errorf("%w: %d byte(s)", errTrailingBytes, len(r.b)-r.i)
	}
	if err == nil {
		return nil
	}
	return &DecodeError{Type: typ, Field: string(r.b[r.fieldKey.start:r.fieldKey.end]), Offset: r.i, Err: err}
}

// decoder is a capsule type that reads itself from a reader.
type decoder[T any] interface {
	*T
	decode(r *reader) error
}

// decodeAs decodes b as one complete value of type T (what named the type
// in errors), rejecting trailing bytes.
func decodeAs[T any, P decoder[T]](b []byte, what string) (*T, error) {
	r := reader{b: b}
	v := new(T)
	if err := r.finish(what, P(v).decode(&r)); err != nil {
		return nil, err
	}
	return v, nil
}

// unmarshalInto is decodeAs for an UnmarshalCBOR method: dst is replaced
// only when b decodes.
func unmarshalInto[T any, P decoder[T]](dst P, b []byte, what string) error {
	v, err := decodeAs[T, P](b, what)
	if err != nil {
		return err
	}
	*dst = *v
	return nil
}
