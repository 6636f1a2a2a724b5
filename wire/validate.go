package wire

import (
	"errors"
	"fmt"
)

// Rule names which per-kind rule an envelope broke.
type Rule uint8

// Validation rules, the reference's four ValidateError variants.
const (
	// Missing: a field the kind requires is absent.
	Missing Rule = iota + 1
	// Forbidden: a field the kind does not allow is present.
	Forbidden
	// TooLarge: a field exceeds its size cap.
	TooLarge
	// Invalid: a field is present but its value or combination is wrong.
	Invalid
)

// String returns the rule name.
func (r Rule) String() string {
	switch r {
	case Missing:
		return "missing"
	case Forbidden:
		return "forbidden"
	case TooLarge:
		return "too large"
	case Invalid:
		return "invalid"
	}
	return fmt.Sprintf("rule(%d)", uint8(r))
}

// Sentinels for errors.Is on a *ValidateError.
var (
	// ErrInvalidEnvelope matches every validation failure.
	ErrInvalidEnvelope = errors.New("wire: invalid envelope")
	// ErrMissing matches a Missing rule failure.
	ErrMissing = errors.New("wire: missing field")
	// ErrForbidden matches a Forbidden rule failure.
	ErrForbidden = errors.New("wire: forbidden field")
	// ErrTooLarge matches a TooLarge rule failure.
	ErrTooLarge = errors.New("wire: field too large")
	// ErrInvalid matches an Invalid rule failure.
	ErrInvalid = errors.New("wire: invalid field")
)

// ValidateError is the first rule an envelope breaks. Kind is set for Missing
// and Forbidden, Reason for Invalid, Size and Cap for TooLarge.
type ValidateError struct {
	Rule   Rule
	Kind   Kind
	Field  string
	Reason string
	Size   int
	Cap    int
	// cause is the error behind an Invalid rule, when there is one.
	cause error
}

// Unwrap returns the error behind the failure, if any (ErrDuplicateKey for
// metadata listing a key twice).
func (e *ValidateError) Unwrap() error { return e.cause }

// Error renders e.g. "wire: invalid command envelope: missing correlation".
func (e *ValidateError) Error() string {
	prefix := "wire: invalid envelope: "
	if e.Kind != "" {
		prefix = "wire: invalid " + string(e.Kind) + " envelope: "
	}
	switch e.Rule {
	case Missing:
		return prefix + "missing " + e.Field
	case Forbidden:
		return prefix + "forbidden " + e.Field
	case TooLarge:
		return fmt.Sprintf("%s%s too large: %d, cap %d", prefix, e.Field, e.Size, e.Cap)
	}
	return prefix + "invalid " + e.Field + ": " + e.Reason
}

// Is matches ErrInvalidEnvelope and the sentinel of e's rule.
func (e *ValidateError) Is(target error) bool {
	switch target {
	case ErrInvalidEnvelope:
		return true
	case ErrMissing:
		return e.Rule == Missing
	case ErrForbidden:
		return e.Rule == Forbidden
	case ErrTooLarge:
		return e.Rule == TooLarge
	case ErrInvalid:
		return e.Rule == Invalid
	}
	return false
}

// IsStatusOperation reports whether op is in the closed status vocabulary.
func IsStatusOperation(op string) bool {
	switch op {
	case OperationTask, OperationCard, OperationProgress, OperationQuarantine, OperationUnquarantine:
		return true
	}
	return false
}

// IsChunkPurpose reports whether op is in the closed chunk-purpose vocabulary.
func IsChunkPurpose(op string) bool {
	switch op {
	case OperationChat, OperationReasoning, OperationToolArgs:
		return true
	}
	return false
}

// Validate applies the per-kind matrix, the vocabularies and the caps in the
// reference's exact order and returns the first failure as a *ValidateError.
// It does not check must_understand, agent ids or body size.
func Validate(e *Envelope) error {
	k := e.Kind
	missing := func(field string) error { return &ValidateError{Rule: Missing, Kind: k, Field: field} }
	forbidden := func(field string) error { return &ValidateError{Rule: Forbidden, Kind: k, Field: field} }
	invalid := func(field, reason string) error {
		return &ValidateError{Rule: Invalid, Kind: k, Field: field, Reason: reason}
	}
	if !k.Known() {
		return invalid("kind", fmt.Sprintf("unknown kind %q", string(k)))
	}
	isTask := e.Operation != nil && *e.Operation == OperationTask

	// 1. record
	if e.Record == nil && k != KindChunk {
		return missing("record")
	}
	// 2. correlation
	if e.Correlation == nil {
		switch k {
		case KindCommand, KindResponse, KindChunk, KindError:
			return missing("correlation")
		case KindStatus:
			if isTask {
				return missing("correlation")
			}
		}
	}
	// 3. channel and sequence
	switch k {
	case KindChunk:
		if e.Channel == nil {
			return missing("channel")
		}
		if e.Sequence == nil {
			return missing("sequence")
		}
	case KindError:
		if e.Sequence != nil && e.Channel == nil {
			return invalid("sequence", "sequence requires channel")
		}
	default:
		if e.Channel != nil {
			return forbidden("channel")
		}
		if e.Sequence != nil {
			return forbidden("sequence")
		}
	}
	// 4. last
	if e.Last && k != KindChunk && k != KindStatus {
		return forbidden("last")
	}
	// 5. finish_reason
	if e.FinishReason != nil {
		switch k {
		case KindResponse:
		case KindChunk:
			if !e.Last {
				return invalid("finish_reason", "finish_reason requires last")
			}
		default:
			return forbidden("finish_reason")
		}
	}
	// 6. idempotency_key
	if e.IdempotencyKey != nil && (k == KindChunk || k == KindStatus || k == KindError) {
		return forbidden("idempotency_key")
	}
	// 7. deadline_micros
	if e.DeadlineMicros != nil {
		switch k {
		case KindResponse, KindEvent, KindStatus, KindError:
			return forbidden("deadline_micros")
		case KindChunk:
			if *e.Sequence != 0 {
				return invalid("deadline_micros", "deadline only on the opening chunk (sequence 0)")
			}
		}
	}
	// 8. task_state
	switch k {
	case KindStatus:
		if isTask && e.TaskState == nil {
			return missing("task_state")
		}
	case KindResponse, KindError:
	default:
		if e.TaskState != nil {
			return forbidden("task_state")
		}
	}
	// 9. operation
	switch k {
	case KindStatus:
		if e.Operation == nil {
			return missing("operation")
		}
		if !IsStatusOperation(*e.Operation) {
			return invalid("operation", fmt.Sprintf("%q is not a status operation (task|card|progress|quarantine|unquarantine)", *e.Operation))
		}
	case KindChunk:
		if *e.Sequence == 0 && e.Operation == nil {
			return missing("operation")
		}
		if e.Operation != nil {
			if *e.Sequence != 0 {
				return invalid("operation", "operation only on the opening chunk (sequence 0)")
			}
			if !IsChunkPurpose(*e.Operation) {
				return invalid("operation", fmt.Sprintf("%q is not a chunk purpose (chat|reasoning|tool_args)", *e.Operation))
			}
		}
	}
	// 10. tool
	if e.Tool != nil && k == KindStatus {
		return forbidden("tool")
	}
	// 11. usage
	if e.Usage != nil {
		if k == KindCommand {
			return forbidden("usage")
		}
		if k == KindChunk && !e.Last {
			return invalid("usage", "usage requires last")
		}
	}
	// 12. body
	if len(e.Body) == 0 {
		switch k {
		case KindStatus:
		case KindChunk:
			if !e.Last {
				return missing("body")
			}
		default:
			return missing("body")
		}
	}
	// 13. caps
	for _, f := range [...]struct {
		name string
		p    *string
	}{{"operation", e.Operation}, {"tool", e.Tool}, {"finish_reason", e.FinishReason}} {
		if f.p != nil && len(*f.p) > MaxTextFieldBytes {
			return &ValidateError{Rule: TooLarge, Kind: k, Field: f.name, Size: len(*f.p), Cap: MaxTextFieldBytes}
		}
	}
	if err := validateMetadata(k, e.Metadata); err != nil {
		return err
	}
	// 14. signature
	if e.Signature != nil {
		if err := e.Signature.Validate(); err != nil {
			var ve *ValidateError
			if errors.As(err, &ve) {
				ve.Kind = k
			}
			return err
		}
	}
	return nil
}

func validateMetadata(k Kind, m Metadata) error {
	if m == nil {
		return nil
	}
	tooLarge := func(field string, size, limit int) error {
		return &ValidateError{Rule: TooLarge, Kind: k, Field: field, Size: size, Cap: limit}
	}
	if len(m) > MaxMetadataEntries {
		return tooLarge("metadata entries", len(m), MaxMetadataEntries)
	}
	// In key order, so the entry an error names does not depend on the
	// order a caller listed them in.
	sorted, err := m.sorted()
	if err != nil {
		return &ValidateError{Rule: Invalid, Kind: k, Field: "metadata", Reason: err.Error(), cause: err}
	}
	total := 0
	for _, e := range sorted {
		if len(e.Key) > MaxMetadataKeyBytes {
			return tooLarge(fmt.Sprintf("metadata key %.32q", e.Key), len(e.Key), MaxMetadataKeyBytes)
		}
		size := e.Value.size()
		if size > MaxMetadataValueSize {
			return tooLarge(fmt.Sprintf("metadata value %.32q", e.Key), size, MaxMetadataValueSize)
		}
		total += len(e.Key) + size
	}
	if total > MaxMetadataTotalBytes {
		return tooLarge("metadata", total, MaxMetadataTotalBytes)
	}
	return nil
}
