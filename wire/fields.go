package wire

import (
	"errors"
	"fmt"
)

// Every AGDX record (the envelope and each capsule, down to the structs
// nested in them) is decoded by one mechanism: the record declares its
// fields once, in a recordFields table, and recordFields.walk reads the
// CBOR map against it. A field is its wire key, what a missing or null
// value means, and the function that reads its value into the record. The
// map walk (unknown keys skipped, a key named twice refused, required
// fields checked at the end) is written here and nowhere else.
//
// The walk calls a field's read function through a switch generated from
// the tables (fields_gen.go, by internal/fieldsgen) rather than through the
// table's function value: a call through a function value makes the
// reader and the record escape to the heap, which cost every decode an
// allocation or a larger buffer; a direct call keeps them where the caller
// put them.

//go:generate go run ./internal/fieldsgen/cmd/fieldsgen

// ErrDuplicateKey reports a map that names the same struct field or metadata
// key twice.
var ErrDuplicateKey = errors.New("wire: duplicate map key")

// errMissingField reports a required struct field that is absent.
var errMissingField = errors.New("wire: missing required field")

// presence says what the decoder does when a field is missing or null.
type presence uint8

const (
	// required: the field must appear (errMissingField otherwise) and carry
	// a value; null is a wrong type like any other.
	required presence = iota
	// defaulted: the field may be missing, leaving the zero value (a serde
	// default in the reference); null is still a wrong type.
	defaulted
	// optional: an Option in the reference; missing, null and undefined all
	// leave the field absent.
	optional
)

// recordField is one field of a record of type T.
type recordField[T any] struct {
	key      string
	presence presence
	// read consumes exactly the field's value (never a null for an
	// optional field: walk reads that) and stores it in v. It must be a
	// named function: the generator calls it by name.
	read func(r *reader, v *T) error
}

// recordFields is a record's fields in wire order, at most 32 of them (the
// width of fieldSet).
type recordFields[T any] []recordField[T]

// walk reads one record, a CBOR map, calling read with the index of each
// known field whose value is to be read, as the reference reads a struct:
// keys are definite strings, unknown keys are skipped, a key named twice
// is ErrDuplicateKey, null or undefined leaves an optional field absent
// (read is not called), and a required field missing at the end is
// errMissingField. While a field's value is read r.fieldKey holds its
// key, so a DecodeError names it. The generated decode<Table> functions
// are the callers; read is their switch.
func (fs recordFields[T]) walk(r *reader, read func(f int) error) error {
	n, indef, err := r.container(majorMap)
	if err != nil {
		return err
	}
	var seen fieldSet
	// expect is where canonical order puts the next key: encoders write
	// fields in table order, so a lookup usually ends at its first compare.
	expect := 0
	for i := uint64(0); r.next(i, n, indef); i++ {
		key, err := r.key()
		if err != nil {
			return err
		}
		// A key is a definite string, so it lies in the input, where the
		// last span read says.
		r.fieldKey.start, r.fieldKey.end = r.spanStart, r.spanEnd
		f := fs.index(key, expect)
		if f < 0 {
			if err := r.skip(); err != nil {
				return err
			}
			r.fieldKey.end = r.fieldKey.start
			continue
		}
		expect = f + 1
		if err := seen.mark(f, key); err != nil {
			return err
		}
		if fs[f].presence == optional {
			none, err := r.absent()
			if err != nil {
				return err
			}
			if none {
				r.fieldKey.end = r.fieldKey.start
				continue
			}
		}
		if err := read(f); err != nil {
			return err
		}
		r.fieldKey.end = r.fieldKey.start
	}
	r.leave()
	for f := range fs {
		if fs[f].presence == required && !seen.has(f) {
			return fmt.Errorf("%w %q", errMissingField, fs[f].key)
		}
	}
	return nil
}

// index returns the index of the field named key, or -1: it looks from
// expect to the end and then from the start.
func (fs recordFields[T]) index(key []byte, expect int) int {
	for f := expect; f < len(fs); f++ {
		if fs[f].key == string(key) {
			return f
		}
	}
	for f := 0; f < expect && f < len(fs); f++ {
		if fs[f].key == string(key) {
			return f
		}
	}
	return -1
}

// fieldSet tracks which fields of a record a map has supplied.
type fieldSet uint32

func (s *fieldSet) mark(i int, key []byte) error {
	if *s&(1<<i) != 0 {
		return fmt.Errorf("%w %q", ErrDuplicateKey, key)
	}
	*s |= 1 << i
	return nil
}

func (s fieldSet) has(i int) bool { return s&(1<<i) != 0 }
