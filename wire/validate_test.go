package wire_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lasergo/laser/wire"
)

func p[T any](v T) *T { return &v }

// validEnvelope returns a minimal envelope of kind k that passes Validate.
func validEnvelope(k wire.Kind) *wire.Envelope {
	e := &wire.Envelope{Kind: k, Record: p(idRecord), Conversation: idConv, Source: "source-agent", Body: []byte("{}")}
	switch k {
	case wire.KindCommand, wire.KindResponse, wire.KindError:
		e.Correlation = p(idCorr)
	case wire.KindChunk:
		e.Record = nil
		e.Correlation, e.Channel, e.Sequence, e.Operation = p(idCorr), p(idChan), p(uint64(0)), p(wire.OperationChat)
	case wire.KindStatus:
		e.Operation, e.Body = p(wire.OperationCard), nil
	}
	return e
}

var allKinds = []wire.Kind{wire.KindCommand, wire.KindResponse, wire.KindEvent, wire.KindChunk, wire.KindStatus, wire.KindError}

func TestValidateBaseEnvelopesPass(t *testing.T) {
	for _, k := range allKinds {
		if err := wire.Validate(validEnvelope(k)); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
}

type ruleCase struct {
	name   string
	kind   wire.Kind
	mutate func(*wire.Envelope)
	rule   wire.Rule // 0 = must pass
	field  string
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		e := validEnvelope(tc.kind)
		tc.mutate(e)
		err := wire.Validate(e)
		if tc.rule == 0 {
			if err != nil {
				t.Errorf("%s: unexpected %v", tc.name, err)
			}
			continue
		}
		var ve *wire.ValidateError
		if !errors.As(err, &ve) {
			t.Errorf("%s: error = %v, want %s %s", tc.name, err, tc.rule, tc.field)
			continue
		}
		if ve.Rule != tc.rule || ve.Field != tc.field {
			t.Errorf("%s: got %s %s (%v), want %s %s", tc.name, ve.Rule, ve.Field, err, tc.rule, tc.field)
		}
	}
}

func TestValidateRecordAndCorrelation(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"command without record", wire.KindCommand, func(e *wire.Envelope) { e.Record = nil }, wire.Missing, "record"},
		{"status without record", wire.KindStatus, func(e *wire.Envelope) { e.Record = nil }, wire.Missing, "record"},
		{"chunk without record", wire.KindChunk, func(e *wire.Envelope) { e.Record = nil }, 0, ""},
		{"command without correlation", wire.KindCommand, func(e *wire.Envelope) { e.Correlation = nil }, wire.Missing, "correlation"},
		{"response without correlation", wire.KindResponse, func(e *wire.Envelope) { e.Correlation = nil }, wire.Missing, "correlation"},
		{"chunk without correlation", wire.KindChunk, func(e *wire.Envelope) { e.Correlation = nil }, wire.Missing, "correlation"},
		{"error without correlation", wire.KindError, func(e *wire.Envelope) { e.Correlation = nil }, wire.Missing, "correlation"},
		{"event without correlation", wire.KindEvent, func(e *wire.Envelope) {}, 0, ""},
		{"status task without correlation", wire.KindStatus, func(e *wire.Envelope) { e.Operation, e.TaskState = p(wire.OperationTask), p(wire.TaskWorking) }, wire.Missing, "correlation"},
		{"status card without correlation", wire.KindStatus, func(e *wire.Envelope) {}, 0, ""},
	})
}

func TestValidateChannelAndSequence(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"chunk without channel", wire.KindChunk, func(e *wire.Envelope) { e.Channel = nil }, wire.Missing, "channel"},
		{"chunk without sequence", wire.KindChunk, func(e *wire.Envelope) { e.Sequence = nil }, wire.Missing, "sequence"},
		{"error sequence without channel", wire.KindError, func(e *wire.Envelope) { e.Sequence = p(uint64(3)) }, wire.Invalid, "sequence"},
		{"error channel without sequence", wire.KindError, func(e *wire.Envelope) { e.Channel = p(idChan) }, 0, ""},
		{"error channel and sequence", wire.KindError, func(e *wire.Envelope) { e.Channel, e.Sequence = p(idChan), p(uint64(3)) }, 0, ""},
		{"command channel", wire.KindCommand, func(e *wire.Envelope) { e.Channel = p(idChan) }, wire.Forbidden, "channel"},
		{"response channel", wire.KindResponse, func(e *wire.Envelope) { e.Channel = p(idChan) }, wire.Forbidden, "channel"},
		{"status sequence", wire.KindStatus, func(e *wire.Envelope) { e.Sequence = p(uint64(0)) }, wire.Forbidden, "sequence"},
		{"event sequence", wire.KindEvent, func(e *wire.Envelope) { e.Sequence = p(uint64(0)) }, wire.Forbidden, "sequence"},
	})
}

func TestValidateLastAndFinishReason(t *testing.T) {
	var cases []ruleCase
	for _, k := range allKinds {
		tc := ruleCase{name: "last on " + string(k), kind: k, mutate: func(e *wire.Envelope) { e.Last = true }}
		if k != wire.KindChunk && k != wire.KindStatus {
			tc.rule, tc.field = wire.Forbidden, "last"
		}
		cases = append(cases, tc)
	}
	cases = append(cases,
		ruleCase{"finish on response", wire.KindResponse, func(e *wire.Envelope) { e.FinishReason = p("stop") }, 0, ""},
		ruleCase{"finish on open chunk", wire.KindChunk, func(e *wire.Envelope) { e.FinishReason = p("stop") }, wire.Invalid, "finish_reason"},
		ruleCase{"finish on last chunk", wire.KindChunk, func(e *wire.Envelope) { e.FinishReason, e.Last = p("stop"), true }, 0, ""},
		ruleCase{"finish on command", wire.KindCommand, func(e *wire.Envelope) { e.FinishReason = p("stop") }, wire.Forbidden, "finish_reason"},
		ruleCase{"finish on status", wire.KindStatus, func(e *wire.Envelope) { e.FinishReason = p("stop") }, wire.Forbidden, "finish_reason"},
	)
	runRuleCases(t, cases)
}

func TestValidateIdempotencyKeyAndDeadline(t *testing.T) {
	var cases []ruleCase
	for _, k := range allKinds {
		idem := ruleCase{name: "idempotency key on " + string(k), kind: k, mutate: func(e *wire.Envelope) { e.IdempotencyKey = p(wire.IdempotencyKey("k")) }}
		if k == wire.KindChunk || k == wire.KindStatus || k == wire.KindError {
			idem.rule, idem.field = wire.Forbidden, "idempotency_key"
		}
		deadline := ruleCase{name: "deadline on " + string(k), kind: k, mutate: func(e *wire.Envelope) { e.DeadlineMicros = p(uint64(1)) }}
		if k != wire.KindCommand && k != wire.KindChunk {
			deadline.rule, deadline.field = wire.Forbidden, "deadline_micros"
		}
		cases = append(cases, idem, deadline)
	}
	cases = append(cases, ruleCase{"deadline on a late chunk", wire.KindChunk, func(e *wire.Envelope) {
		e.Sequence, e.Operation, e.DeadlineMicros = p(uint64(5)), nil, p(uint64(1))
	}, wire.Invalid, "deadline_micros"})
	runRuleCases(t, cases)
}

func TestValidateTaskStateAndOperation(t *testing.T) {
	var cases []ruleCase
	for _, k := range allKinds {
		tc := ruleCase{name: "task_state on " + string(k), kind: k, mutate: func(e *wire.Envelope) { e.TaskState = p(wire.TaskWorking) }}
		if k == wire.KindCommand || k == wire.KindEvent || k == wire.KindChunk {
			tc.rule, tc.field = wire.Forbidden, "task_state"
		}
		cases = append(cases, tc)
	}
	for _, op := range []string{wire.OperationCard, wire.OperationProgress, wire.OperationQuarantine, wire.OperationUnquarantine} {
		cases = append(cases, ruleCase{"status " + op, wire.KindStatus, func(e *wire.Envelope) { e.Operation = p(op) }, 0, ""})
	}
	for _, op := range []string{wire.OperationChat, wire.OperationReasoning, wire.OperationToolArgs} {
		cases = append(cases, ruleCase{"chunk purpose " + op, wire.KindChunk, func(e *wire.Envelope) { e.Operation = p(op) }, 0, ""})
	}
	cases = append(cases,
		ruleCase{"status task without task_state", wire.KindStatus, func(e *wire.Envelope) { e.Operation, e.Correlation = p(wire.OperationTask), p(idCorr) }, wire.Missing, "task_state"},
		ruleCase{"status task", wire.KindStatus, func(e *wire.Envelope) {
			e.Operation, e.Correlation, e.TaskState = p(wire.OperationTask), p(idCorr), p(wire.TaskState(200))
		}, 0, ""},
		ruleCase{"status without operation", wire.KindStatus, func(e *wire.Envelope) { e.Operation = nil }, wire.Missing, "operation"},
		ruleCase{"status bad operation", wire.KindStatus, func(e *wire.Envelope) { e.Operation = p("telemetry") }, wire.Invalid, "operation"},
		ruleCase{"opening chunk without operation", wire.KindChunk, func(e *wire.Envelope) { e.Operation = nil }, wire.Missing, "operation"},
		ruleCase{"late chunk with operation", wire.KindChunk, func(e *wire.Envelope) { e.Sequence = p(uint64(1)) }, wire.Invalid, "operation"},
		ruleCase{"late chunk without operation", wire.KindChunk, func(e *wire.Envelope) { e.Sequence, e.Operation = p(uint64(1)), nil }, 0, ""},
		ruleCase{"chunk with unknown purpose", wire.KindChunk, func(e *wire.Envelope) { e.Operation = p("summary") }, wire.Invalid, "operation"},
		ruleCase{"command open operation", wire.KindCommand, func(e *wire.Envelope) { e.Operation = p("execute_tool") }, 0, ""},
		ruleCase{"event state_delta", wire.KindEvent, func(e *wire.Envelope) { e.Operation = p(wire.OperationStateDelta) }, 0, ""},
	)
	runRuleCases(t, cases)
}

func TestValidateToolUsageAndBody(t *testing.T) {
	var cases []ruleCase
	for _, k := range allKinds {
		tool := ruleCase{name: "tool on " + string(k), kind: k, mutate: func(e *wire.Envelope) { e.Tool = p("search") }}
		if k == wire.KindStatus {
			tool.rule, tool.field = wire.Forbidden, "tool"
		}
		cases = append(cases, tool)
	}
	usage := func(e *wire.Envelope) { e.Usage = &wire.TokenUsage{InputTokens: 1, OutputTokens: 2} }
	cases = append(cases,
		ruleCase{"usage on command", wire.KindCommand, usage, wire.Forbidden, "usage"},
		ruleCase{"usage on response", wire.KindResponse, usage, 0, ""},
		ruleCase{"usage on open chunk", wire.KindChunk, usage, wire.Invalid, "usage"},
		ruleCase{"terminal chunk without body", wire.KindChunk, func(e *wire.Envelope) {
			// The shape of the reference's agent_chunk_terminal fixture.
			usage(e)
			e.Sequence, e.Operation, e.Last, e.FinishReason, e.Body = p(uint64(8)), nil, true, p("stop"), nil
		}, 0, ""},
		ruleCase{"open chunk without body", wire.KindChunk, func(e *wire.Envelope) { e.Body = nil }, wire.Missing, "body"},
		ruleCase{"status without body", wire.KindStatus, func(e *wire.Envelope) {}, 0, ""},
	)
	for _, k := range []wire.Kind{wire.KindCommand, wire.KindResponse, wire.KindEvent, wire.KindError} {
		cases = append(cases, ruleCase{"empty body on " + string(k), k, func(e *wire.Envelope) { e.Body = []byte{} }, wire.Missing, "body"})
	}
	runRuleCases(t, cases)
}

func TestValidateCaps(t *testing.T) {
	long := strings.Repeat("x", wire.MaxTextFieldBytes+1)
	atCap := strings.Repeat("x", wire.MaxTextFieldBytes)
	many := wire.Metadata{}
	for i := 0; i <= wire.MaxMetadataEntries; i++ {
		many.Set(fmt.Sprint(i), wire.NullValue())
	}
	heavy := wire.Metadata{}
	for i := 0; i < 9; i++ {
		heavy.Set(fmt.Sprint(i), wire.StrValue(strings.Repeat("v", 1000)))
	}
	half := strings.Repeat("v", 511)
	runRuleCases(t, []ruleCase{
		{"operation at cap", wire.KindCommand, func(e *wire.Envelope) { e.Operation = p(atCap) }, 0, ""},
		{"operation over cap", wire.KindCommand, func(e *wire.Envelope) { e.Operation = p(long) }, wire.TooLarge, "operation"},
		{"tool over cap", wire.KindEvent, func(e *wire.Envelope) { e.Tool = p(long) }, wire.TooLarge, "tool"},
		{"finish_reason over cap", wire.KindResponse, func(e *wire.Envelope) { e.FinishReason = p(long) }, wire.TooLarge, "finish_reason"},
		{"33 metadata entries", wire.KindEvent, func(e *wire.Envelope) { e.Metadata = many }, wire.TooLarge, "metadata entries"},
		{"metadata key over cap", wire.KindEvent, func(e *wire.Envelope) {
			e.Metadata = wire.Metadata{{Key: strings.Repeat("k", 257), Value: wire.NullValue()}}
		}, wire.TooLarge, fmt.Sprintf("metadata key %.32q", strings.Repeat("k", 257))},
		{"metadata value over cap", wire.KindEvent, func(e *wire.Envelope) {
			e.Metadata = wire.Metadata{{Key: "k", Value: wire.StrValue(strings.Repeat("v", 1025))}}
		}, wire.TooLarge, `metadata value "k"`},
		{"metadata list at cap", wire.KindEvent, func(e *wire.Envelope) {
			e.Metadata = wire.Metadata{{Key: "k", Value: wire.ListValue(wire.StrValue(half), wire.StrValue(half))}}
		}, 0, ""},
		{"metadata list over cap", wire.KindEvent, func(e *wire.Envelope) {
			e.Metadata = wire.Metadata{{Key: "k", Value: wire.ListValue(wire.StrValue(half+"v"), wire.StrValue(half))}}
		}, wire.TooLarge, `metadata value "k"`},
		{"metadata total over cap", wire.KindEvent, func(e *wire.Envelope) { e.Metadata = heavy }, wire.TooLarge, "metadata"},
	})
}

func TestValidateSignatureCapsule(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"ed25519 short key id", wire.KindCommand, func(e *wire.Envelope) {
			e.Signature = &wire.Signature{Scheme: 1, KeyID: make([]byte, 7), Bytes: make([]byte, 64)}
		}, wire.Invalid, "signature"},
		{"ed25519 short signature", wire.KindCommand, func(e *wire.Envelope) {
			e.Signature = &wire.Signature{Scheme: 1, KeyID: make([]byte, 8), Bytes: make([]byte, 63)}
		}, wire.Invalid, "signature"},
		{"ed25519 well formed", wire.KindCommand, func(e *wire.Envelope) {
			e.Signature = &wire.Signature{Scheme: 1, KeyID: make([]byte, 8), Bytes: make([]byte, 64)}
		}, 0, ""},
		{"unknown scheme passes", wire.KindCommand, func(e *wire.Envelope) { e.Signature = &wire.Signature{Scheme: 9} }, 0, ""},
	})
}

func TestValidateReportsFirstFailureInOrder(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"record before correlation", wire.KindCommand, func(e *wire.Envelope) { e.Record, e.Correlation = nil, nil }, wire.Missing, "record"},
		{"deadline before operation", wire.KindChunk, func(e *wire.Envelope) { e.Sequence, e.DeadlineMicros = p(uint64(5)), p(uint64(1)) }, wire.Invalid, "deadline_micros"},
		{"operation before tool", wire.KindStatus, func(e *wire.Envelope) { e.Operation, e.Tool = nil, p("x") }, wire.Missing, "operation"},
		{"body before caps", wire.KindCommand, func(e *wire.Envelope) { e.Body, e.Tool = nil, p(strings.Repeat("x", 300)) }, wire.Missing, "body"},
		{"caps before signature", wire.KindCommand, func(e *wire.Envelope) {
			e.Tool, e.Signature = p(strings.Repeat("x", 300)), &wire.Signature{Scheme: 1}
		}, wire.TooLarge, "tool"},
		{"last before finish_reason", wire.KindEvent, func(e *wire.Envelope) { e.Last, e.FinishReason = true, p("x") }, wire.Forbidden, "last"},
	})
}

func TestValidateErrorText(t *testing.T) {
	for _, tc := range []struct {
		kind   wire.Kind
		mutate func(*wire.Envelope)
		want   string
	}{
		{wire.KindCommand, func(e *wire.Envelope) { e.Correlation = nil }, "wire: invalid command envelope: missing correlation"},
		{wire.KindResponse, func(e *wire.Envelope) { e.Channel = p(idChan) }, "wire: invalid response envelope: forbidden channel"},
		{wire.KindEvent, func(e *wire.Envelope) { e.Tool = p(strings.Repeat("x", 300)) }, "wire: invalid event envelope: tool too large: 300, cap 256"},
		{wire.KindError, func(e *wire.Envelope) { e.Sequence = p(uint64(1)) }, "wire: invalid error envelope: invalid sequence: sequence requires channel"},
	} {
		e := validEnvelope(tc.kind)
		tc.mutate(e)
		if err := wire.Validate(e); err == nil || err.Error() != tc.want {
			t.Errorf("error = %v, want %q", err, tc.want)
		}
	}
}

func TestValidateErrorMatchesSentinels(t *testing.T) {
	e := validEnvelope(wire.KindCommand)
	e.Correlation = nil
	err := wire.Validate(e)
	if !errors.Is(err, wire.ErrInvalidEnvelope) || !errors.Is(err, wire.ErrMissing) {
		t.Fatalf("%v does not match ErrInvalidEnvelope and ErrMissing", err)
	}
	for _, other := range []error{wire.ErrForbidden, wire.ErrTooLarge, wire.ErrInvalid, wire.ErrDecode} {
		if errors.Is(err, other) {
			t.Errorf("%v matches %v", err, other)
		}
	}
	wrapped := fmt.Errorf("publish: %w", err)
	var ve *wire.ValidateError
	if !errors.As(wrapped, &ve) || ve.Kind != wire.KindCommand || ve.Field != "correlation" {
		t.Fatalf("errors.As through a wrap = %+v", ve)
	}
}

func TestValidateIgnoresMustUnderstandAndTaskTerminality(t *testing.T) {
	e := validEnvelope(wire.KindResponse)
	e.MustUnderstand, e.TaskState = ^uint64(0), p(wire.TaskState(0))
	if err := wire.Validate(e); err != nil {
		t.Fatal(err)
	}
}
