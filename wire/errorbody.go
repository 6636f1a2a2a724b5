package wire

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// ErrorCode classifies an agent failure carried by an error envelope; unknown
// codes pass through.
type ErrorCode uint8

// Agent error codes.
const (
	ErrorInvalidRequest   ErrorCode = 1
	ErrorUnauthorized     ErrorCode = 2
	ErrorUnsupported      ErrorCode = 3
	ErrorDeadlineExceeded ErrorCode = 4
	ErrorCancelled        ErrorCode = 5
	ErrorToolFailure      ErrorCode = 6
	ErrorInternal         ErrorCode = 7
)

var errorCodeNames = [...]string{"", "invalid_request", "unauthorized", "unsupported", "deadline_exceeded", "cancelled", "tool_failure", "internal"}

// String returns the snake_case name, or "unrecognized-N".
func (c ErrorCode) String() string {
	if c != 0 && int(c) < len(errorCodeNames) {
		return errorCodeNames[c]
	}
	return "unrecognized-" + strconv.Itoa(int(c))
}

// ErrorBody is the CBOR body of an error envelope (content type cbor).
type ErrorBody struct {
	Code      ErrorCode
	Message   *string
	Retryable bool
	Detail    Metadata
}

// Marshal returns the body's canonical CBOR; retryable is always written.
func (e *ErrorBody) Marshal() ([]byte, error) { return e.AppendMarshal(nil) }

// AppendMarshal appends the body's canonical CBOR to b.
func (e *ErrorBody) AppendMarshal(b []byte) ([]byte, error) {
	n := uint64(2)
	if e.Message != nil {
		if !utf8.ValidString(*e.Message) {
			return b, fmt.Errorf("%w error body: message is not valid UTF-8", ErrEncode)
		}
		n++
	}
	if e.Detail != nil {
		n++
	}
	b = appendHead(b, majorMap, n)
	b = append(b, "\x64code"...)
	b = appendHead(b, majorUint, uint64(e.Code))
	if e.Message != nil {
		b = append(b, "\x67message"...)
		b = appendText(b, *e.Message)
	}
	b = append(b, "\x69retryable"...)
	b = appendBool(b, e.Retryable)
	if e.Detail != nil {
		b = append(b, "\x66detail"...)
		var err error
		if b, err = e.Detail.appendCBOR(b); err != nil {
			return b, fmt.Errorf("%w error body: detail: %w", ErrEncode, err)
		}
	}
	return b, nil
}

// MarshalCBOR implements cbor.Marshaler.
func (e *ErrorBody) MarshalCBOR() ([]byte, error) { return e.Marshal() }

// UnmarshalCBOR implements cbor.Unmarshaler.
func (e *ErrorBody) UnmarshalCBOR(b []byte) error { return unmarshalInto(e, b, "error body") }

// DecodeErrorBody decodes an error envelope's body.
func DecodeErrorBody(b []byte) (*ErrorBody, error) { return decodeAs[ErrorBody](b, "error body") }

func (e *ErrorBody) decode(r *reader) error { return decodeErrorBodyFields(r, e) }

// errorBodyFields are the error body's fields in wire order.
var errorBodyFields = recordFields[ErrorBody]{
	{"code", required, readErrorBodyCode},
	{"message", optional, readErrorBodyMessage},
	{"retryable", defaulted, readErrorBodyRetryable},
	{"detail", optional, readErrorBodyDetail},
}

func readErrorBodyCode(r *reader, e *ErrorBody) error {
	v, err := r.uint(math.MaxUint8)
	e.Code = ErrorCode(v)
	return err
}

func readErrorBodyMessage(r *reader, e *ErrorBody) error {
	s, err := r.string()
	e.Message = &s
	return err
}

func readErrorBodyRetryable(r *reader, e *ErrorBody) (err error) {
	e.Retryable, err = r.bool()
	return err
}

func readErrorBodyDetail(r *reader, e *ErrorBody) error {
	return e.Detail.decode(r, nil)
}
