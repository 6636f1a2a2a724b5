package wire

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ValueKind discriminates the variants of Value.
type ValueKind uint8

// Value variants; the zero Value is Null.
const (
	ValueNull ValueKind = iota
	ValueStr
	ValueInt
	ValueUint
	ValueFloat
	ValueBool
	ValueList
)

var valueKindNames = [...]string{"null", "str", "int", "uint", "float", "bool", "list"}

// String returns the variant name.
func (k ValueKind) String() string {
	if int(k) < len(valueKindNames) {
		return valueKindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one metadata (or error detail) value, an untagged union that rides
// as a bare CBOR item. A decoded non-negative integer up to MaxInt64 is Int,
// a larger one Uint, as in the reference.
type Value struct {
	_    [0]func() // not comparable with ==: use Equal
	kind ValueKind
	num  uint64 // Int (two's complement), Uint, Float bits or Bool (0/1)
	str  string
	// list points to a List value's items: a pointer rather than a slice
	// keeps Value at 40 bytes, and so every metadata entry small.
	list *[]Value
}

// items returns a List value's items (nil for any other value).
func (v Value) items() []Value {
	if v.list == nil {
		return nil
	}
	return *v.list
}

// listOf makes a List value holding items as they are.
func listOf(items []Value) Value { return Value{kind: ValueList, list: &items} }

// errBadValue reports a metadata value the encoder or decoder cannot carry.
var errBadValue = errors.New("wire: invalid metadata value")

// StrValue is a text value.
func StrValue(s string) Value { return Value{kind: ValueStr, str: s} }

// IntValue is a signed integer value.
func IntValue(i int64) Value { return Value{kind: ValueInt, num: uint64(i)} }

// UintValue is an unsigned integer value.
func UintValue(u uint64) Value { return Value{kind: ValueUint, num: u} }

// FloatValue is a float value; it encodes in the shortest exact width.
func FloatValue(f float64) Value { return Value{kind: ValueFloat, num: math.Float64bits(f)} }

// BoolValue is a bool value.
func BoolValue(b bool) Value {
	if b {
		return Value{kind: ValueBool, num: 1}
	}
	return Value{kind: ValueBool}
}

// NullValue is the null value (also the zero Value).
func NullValue() Value { return Value{} }

// ListValue is a list of values; the slice is copied.
func ListValue(items ...Value) Value {
	return listOf(append(make([]Value, 0, len(items)), items...))
}

// Kind returns the variant.
func (v Value) Kind() ValueKind { return v.kind }

// AsStr returns a Str value's text.
func (v Value) AsStr() (string, bool) { return v.str, v.kind == ValueStr }

// AsInt returns an Int value, or a Uint value that fits int64.
func (v Value) AsInt() (int64, bool) {
	switch {
	case v.kind == ValueInt:
		return int64(v.num), true
	case v.kind == ValueUint && v.num <= math.MaxInt64:
		return int64(v.num), true
	}
	return 0, false
}

// AsUint returns a Uint value or a non-negative Int value: small unsigned
// numbers decode as Int, so readers of counters and fences accept both.
func (v Value) AsUint() (uint64, bool) {
	switch {
	case v.kind == ValueUint:
		return v.num, true
	case v.kind == ValueInt && int64(v.num) >= 0:
		return v.num, true
	}
	return 0, false
}

// AsFloat returns a Float value.
func (v Value) AsFloat() (float64, bool) { return math.Float64frombits(v.num), v.kind == ValueFloat }

// AsBool returns a Bool value.
func (v Value) AsBool() (bool, bool) { return v.num != 0, v.kind == ValueBool }

// IsNull reports whether v is Null.
func (v Value) IsNull() bool { return v.kind == ValueNull }

// AsList returns a List value's items (not a copy).
func (v Value) AsList() ([]Value, bool) { return v.items(), v.kind == ValueList }

// Equal reports whether two values are the same variant with the same
// content; floats compare by bits, so NaN equals itself and 0 differs from -0.
func (v Value) Equal(o Value) bool {
	vl, ol := v.items(), o.items()
	if v.kind != o.kind || v.num != o.num || v.str != o.str || len(vl) != len(ol) {
		return false
	}
	for i := range vl {
		if !vl[i].Equal(ol[i]) {
			return false
		}
	}
	return true
}

// String renders the value for logs and test failures.
func (v Value) String() string {
	switch v.kind {
	case ValueStr:
		return strconv.Quote(v.str)
	case ValueInt:
		return strconv.FormatInt(int64(v.num), 10)
	case ValueUint:
		return strconv.FormatUint(v.num, 10) + "u"
	case ValueFloat:
		return strconv.FormatFloat(math.Float64frombits(v.num), 'g', -1, 64)
	case ValueBool:
		return strconv.FormatBool(v.num != 0)
	case ValueList:
		parts := make([]string, len(v.items()))
		for i, item := range v.items() {
			parts[i] = item.String()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return "null"
}

// size is the reference's value_size, which the metadata caps measure.
func (v Value) size() int {
	switch v.kind {
	case ValueStr:
		return len(v.str)
	case ValueList:
		n := 0
		for _, item := range v.items() {
			n += 1 + item.size()
		}
		return n
	}
	return 9
}

// maxValueNesting is the deepest list nesting that still decodes inside an
// envelope or error body (the struct and the map take two of the decoder's
// MaxNestingDepth levels).
const maxValueNesting = MaxNestingDepth - 2

func (v Value) appendCBOR(b []byte) ([]byte, error) { return v.appendNested(b, 0) }

func (v Value) appendNested(b []byte, depth int) ([]byte, error) {
	switch v.kind {
	case ValueNull:
		return append(b, cborNull), nil
	case ValueStr:
		if !utf8.ValidString(v.str) {
			return b, fmt.Errorf("%w: text is not valid UTF-8", errBadValue)
		}
		return appendText(b, v.str), nil
	case ValueInt:
		return appendInt(b, int64(v.num)), nil
	case ValueUint:
		return appendHead(b, majorUint, v.num), nil
	case ValueFloat:
		return appendFloat(b, math.Float64frombits(v.num)), nil
	case ValueBool:
		return appendBool(b, v.num != 0), nil
	case ValueList:
		if depth >= maxValueNesting {
			return b, fmt.Errorf("%w: lists nested deeper than %d", errBadValue, maxValueNesting)
		}
		b = appendHead(b, majorArray, uint64(len(v.items())))
		var err error
		for _, item := range v.items() {
			if b, err = item.appendNested(b, depth+1); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	return b, fmt.Errorf("%w: unknown variant %d", errBadValue, v.kind)
}

// MarshalCBOR encodes the value as its bare CBOR item.
func (v Value) MarshalCBOR() ([]byte, error) { return v.appendCBOR(nil) }

// UnmarshalCBOR decodes exactly one CBOR item into v.
func (v *Value) UnmarshalCBOR(b []byte) error {
	r := reader{b: b}
	return r.finish("value", v.decode(&r))
}

// decode tries the variants in the reference's order: Str (text, or a byte
// string that is UTF-8, as the reference's string variant takes bytes),
// Int, Uint, Float, Bool, Null (null or undefined), List. Maps and tagged
// items match no variant.
func (v *Value) decode(r *reader) error {
	if r.i >= len(r.b) {
		return r.errf("unexpected end of input")
	}
	ib := r.b[r.i]
	switch ib & 0xe0 {
	case majorText:
		s, err := r.string()
		*v = Value{kind: ValueStr, str: s}
		return err
	case majorBytes:
		p, err := r.str(majorBytes)
		if err != nil {
			return err
		}
		if !validUTF8(p) {
			return fmt.Errorf("%w: a byte string that is not UTF-8 matches no variant", errBadValue)
		}
		*v = Value{kind: ValueStr, str: r.intern(p)}
		return nil
	case majorUint:
		_, n, _, err := r.head()
		if n <= math.MaxInt64 {
			*v = Value{kind: ValueInt, num: n}
		} else {
			*v = Value{kind: ValueUint, num: n}
		}
		return err
	case majorNeg:
		_, n, _, err := r.head()
		if err == nil && n > math.MaxInt64 {
			return fmt.Errorf("%w: negative integer below int64", errBadValue)
		}
		*v = Value{kind: ValueInt, num: ^n}
		return err
	case majorArray:
		n, indef, err := r.container(majorArray)
		if err != nil {
			return err
		}
		var list []Value
		if !indef {
			list = make([]Value, 0, min(n, 16)) // n is claimed, not proven: grow as items arrive
		}
		for i := uint64(0); r.next(i, n, indef); i++ {
			var item Value
			if err := item.decode(r); err != nil {
				return err
			}
			list = append(list, item)
		}
		r.leave()
		*v = listOf(list)
		return nil
	case majorSimple:
		switch ib {
		case cborFalse, cborTrue:
			r.i++
			*v = BoolValue(ib == cborTrue)
			return nil
		case cborNull, cborUndefined:
			r.i++
			*v = Value{}
			return nil
		case cborFloat16, cborFloat32, cborFloat64:
			f, err := r.float()
			*v = FloatValue(f)
			return err
		case majorSimple | 24:
			if _, _, _, err := r.head(); err != nil {
				return err
			}
		}
		return fmt.Errorf("%w: simple value 0x%02x", errBadValue, ib)
	}
	return fmt.Errorf("%w: a %s matches no variant", errBadValue, majorName(ib&0xe0))
}

func (v Value) clone() Value {
	if v.kind != ValueList {
		return v
	}
	items := v.items()
	list := make([]Value, len(items))
	for i, item := range items {
		list[i] = item.clone()
	}
	return listOf(list)
}
