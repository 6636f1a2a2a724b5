package wire

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// DeadLetterReason says why a record was dead-lettered; unknown codes pass
// through.
type DeadLetterReason uint8

// Dead-letter reasons.
const (
	ReasonRetryExhausted   DeadLetterReason = 1
	ReasonRejected         DeadLetterReason = 2
	ReasonDecodeFailed     DeadLetterReason = 3
	ReasonDeadlineExceeded DeadLetterReason = 4
)

var reasonNames = [...]string{"", "retry_exhausted", "rejected", "decode_failed", "deadline_exceeded"}

// String returns the snake_case name, or "unrecognized-N".
func (r DeadLetterReason) String() string {
	if r != 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unrecognized-" + strconv.Itoa(int(r))
}

// DeadLetter is the capsule published to agent.dlq: where the poison record
// sat, why it was dropped, and its payload verbatim.
type DeadLetter struct {
	Source   LogPosition
	Reason   DeadLetterReason
	Attempts uint32
	Detail   *string
	Payload  []byte
}

// Marshal returns the capsule's canonical CBOR (payload always present).
func (d *DeadLetter) Marshal() ([]byte, error) {
	return d.AppendMarshal(make([]byte, 0, 64+len(d.Payload)))
}

// AppendMarshal appends the capsule's canonical CBOR to b.
func (d *DeadLetter) AppendMarshal(b []byte) ([]byte, error) {
	n := uint64(4)
	if d.Detail != nil {
		if !utf8.ValidString(*d.Detail) {
			return b, fmt.Errorf("%w dead letter: detail is not valid UTF-8", ErrEncode)
		}
		n++
	}
	b = appendHead(b, majorMap, n)
	b = append(b, "\x66source"...)
	b = appendLogPosition(b, d.Source)
	b = append(b, "\x66reason"...)
	b = appendHead(b, majorUint, uint64(d.Reason))
	b = append(b, "\x68attempts"...)
	b = appendHead(b, majorUint, uint64(d.Attempts))
	if d.Detail != nil {
		b = append(b, "\x66detail"...)
		b = appendText(b, *d.Detail)
	}
	b = append(b, "\x67payload"...)
	return appendBytes(b, d.Payload), nil
}

// MarshalCBOR implements cbor.Marshaler.
func (d *DeadLetter) MarshalCBOR() ([]byte, error) { return d.Marshal() }

// UnmarshalCBOR implements cbor.Unmarshaler.
func (d *DeadLetter) UnmarshalCBOR(b []byte) error { return unmarshalInto(d, b, "dead letter") }

// DecodeDeadLetter decodes a dead-letter capsule; the payload is copied.
func DecodeDeadLetter(b []byte) (*DeadLetter, error) { return decodeAs[DeadLetter](b, "dead letter") }

func (d *DeadLetter) decode(r *reader) error { return decodeDeadLetterFields(r, d) }

// deadLetterFields are the dead-letter capsule's fields in wire order.
var deadLetterFields = recordFields[DeadLetter]{
	{"source", required, readDeadLetterSource},
	{"reason", required, readDeadLetterReason},
	{"attempts", required, readDeadLetterAttempts},
	{"detail", optional, readDeadLetterDetail},
	{"payload", required, readDeadLetterPayload},
}

func readDeadLetterSource(r *reader, d *DeadLetter) (err error) {
	d.Source, err = r.logPosition()
	return err
}

func readDeadLetterReason(r *reader, d *DeadLetter) error {
	v, err := r.uint(math.MaxUint8)
	d.Reason = DeadLetterReason(v)
	return err
}

func readDeadLetterAttempts(r *reader, d *DeadLetter) error {
	v, err := r.uint(math.MaxUint32)
	d.Attempts = uint32(v)
	return err
}

func readDeadLetterDetail(r *reader, d *DeadLetter) error {
	s, err := r.string()
	d.Detail = &s
	return err
}

func readDeadLetterPayload(r *reader, d *DeadLetter) (err error) {
	d.Payload, err = r.binBytes()
	return err
}
