package wire

import (
	"errors"
	"fmt"
	"math"
)

// MemoryOp says what a memory record does.
type MemoryOp uint8

// Memory record operations, the reference's enum variants in order.
const (
	// MemoryItem remembers a body under an id.
	MemoryItem MemoryOp = iota + 1
	// MemoryForget tombstones an id.
	MemoryForget
	// MemoryFeedback reweights an id's recall rank.
	MemoryFeedback
)

// String returns the variant name as it rides the wire.
func (op MemoryOp) String() string {
	switch op {
	case MemoryItem:
		return "Item"
	case MemoryForget:
		return "Forget"
	case MemoryFeedback:
		return "Feedback"
	}
	return fmt.Sprintf("MemoryOp(%d)", uint8(op))
}

// errInvalidMemoryRecord reports a memory record that cannot be encoded.
var errInvalidMemoryRecord = errors.New("wire: invalid memory record")

// MemoryRecord is one entry of log-backed memory as it rides the memory topic
// (agent.audit by default), byte-identical to the reference's record: an
// externally tagged enum, {"Item": {"id", "kind", "body"}}, {"Forget":
// {"target"}} or {"Feedback": {"target", "weight"}}, the body a CBOR array of
// byte values (the reference serializes it as a plain sequence).
type MemoryRecord struct {
	Op MemoryOp
	// ID is the item's id (Item) or the id it targets (Forget, Feedback):
	// a ULID's text for a recalled item, "<namespace>/<key>" for a named one.
	ID string
	// Kind is the item's kind word, such as "fact" or "message" (Item only).
	Kind string
	// Body is the remembered bytes (Item only).
	Body []byte
	// Weight promotes (positive) or demotes (negative) the target (Feedback only).
	Weight float32
}

// Marshal returns the record's canonical CBOR.
func (m *MemoryRecord) Marshal() ([]byte, error) {
	b := make([]byte, 0, 48+len(m.ID)+len(m.Kind)+2*len(m.Body))
	b = append(b, majorMap|1)
	b = appendText(b, m.Op.String())
	switch m.Op {
	case MemoryItem:
		b = append(b, majorMap|3)
		b = appendText(appendText(b, "id"), m.ID)
		b = appendText(appendText(b, "kind"), m.Kind)
		b = appendHead(appendText(b, "body"), majorArray, uint64(len(m.Body)))
		for _, c := range m.Body {
			b = appendHead(b, majorUint, uint64(c))
		}
	case MemoryForget:
		b = append(b, majorMap|1)
		b = appendText(appendText(b, "target"), m.ID)
	case MemoryFeedback:
		b = append(b, majorMap|2)
		b = appendText(appendText(b, "target"), m.ID)
		b = appendFloat(appendText(b, "weight"), float64(m.Weight))
	default:
		return nil, fmt.Errorf("%w: unknown operation %d", errInvalidMemoryRecord, m.Op)
	}
	return b, nil
}

// DecodeMemoryRecord decodes one memory record, rejecting trailing bytes.
func DecodeMemoryRecord(b []byte) (*MemoryRecord, error) {
	return decodeAs[MemoryRecord](b, "memory record")
}

func (m *MemoryRecord) decode(r *reader) error {
	n, indef, err := r.container(majorMap)
	if err != nil {
		return err
	}
	if indef || n != 1 {
		return r.errf("want a map of one variant")
	}
	variant, err := r.string()
	if err != nil {
		return err
	}
	switch variant {
	case "Item":
		m.Op = MemoryItem
		err = decodeMemoryItemFields(r, m)
	case "Forget":
		m.Op = MemoryForget
		err = decodeMemoryForgetFields(r, m)
	case "Feedback":
		m.Op = MemoryFeedback
		err = decodeMemoryFeedbackFields(r, m)
	default:
		return r.errf("unknown memory record variant %q", variant)
	}
	if err != nil {
		return err
	}
	r.leave()
	return nil
}

// Each variant's fields in wire order; another variant's field is an
// unknown key, skipped.
var (
	memoryItemFields = recordFields[MemoryRecord]{
		{"id", required, readMemoryID},
		{"kind", required, readMemoryKind},
		{"body", required, readMemoryBody},
	}
	memoryForgetFields = recordFields[MemoryRecord]{
		{"target", required, readMemoryID},
	}
	memoryFeedbackFields = recordFields[MemoryRecord]{
		{"target", required, readMemoryID},
		{"weight", required, readMemoryWeight},
	}
)

// readMemoryID reads the item's id ("id" in an Item, "target" in the others).
func readMemoryID(r *reader, m *MemoryRecord) (err error) {
	m.ID, err = r.string()
	return err
}

func readMemoryKind(r *reader, m *MemoryRecord) (err error) {
	m.Kind, err = r.string()
	return err
}

func readMemoryBody(r *reader, m *MemoryRecord) (err error) {
	m.Body, err = r.binBytes()
	return err
}

func readMemoryWeight(r *reader, m *MemoryRecord) error {
	f, err := r.float()
	if err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
		err = r.errf("weight %g overflows an f32", f)
	}
	m.Weight = float32(f)
	return err
}
