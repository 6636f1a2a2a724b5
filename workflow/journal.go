package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The journal records a completed step in two forms, both keyed by the
// run's conversation:
//
//   - an AGDX event with operation workflow.step_completed whose CBOR body
//     is {"label": text, "output": bytes}, signed with the workflow's
//     SigningKey; under a verifier only this form counts, and only when the
//     orchestrator (principal Name) signed it;
//   - a plain record, the reference's own form, read by the Rust and
//     TypeScript orchestrators: provenance headers carrying the run's
//     conversation and a CBOR payload {"StepCompleted": {"label": text,
//     "output": bytes}}. The reference's Rust encoder writes the output as
//     an array of unsigned integers (serde's Vec<u8>), its TypeScript port
//     as a byte string; both of them read a byte string, which is what is
//     written here, and replay reads either. Without a verifier a plain
//     record counts like an event, so a run a Rust or TypeScript
//     orchestrator started resumes here, and the reverse.
//
// A step whose compensation answered is journaled undone (an event with
// operation workflow.step_compensated), so a resumed run runs it again; the
// reference has no such record and skips the step.

// journalWait bounds the journal write of a step that completed: it is
// written even when the run was stopped meanwhile, so a resumed run does
// not redo the step.
const journalWait = 5 * time.Second

// journalEntry is the CBOR body of a step-completed event.
type journalEntry struct {
	Label  string `cbor:"label"`
	Output []byte `cbor:"output"`
}

// referenceEntry is the payload of the reference's plain journal record.
type referenceEntry struct {
	StepCompleted *referenceStep `cbor:"StepCompleted"`
}

type referenceStep struct {
	Label  string          `cbor:"label"`
	Output cbor.RawMessage `cbor:"output"`
}

// referenceOutput is the payload of a reference journal record: what the
// reference writes for label and output, its output as a byte string.
func referenceOutput(label string, output []byte) ([]byte, error) {
	if output == nil {
		output = []byte{} // an empty byte string, never CBOR null
	}
	raw, err := cbor.Marshal(output)
	if err != nil {
		return nil, err
	}
	return cbor.Marshal(referenceEntry{StepCompleted: &referenceStep{Label: label, Output: raw}})
}

var errNotAJournalRecord = errors.New("not a step-completed record")

// decodeReference reads a reference journal payload; the output may be a
// byte string or an array of integers 0-255.
func decodeReference(payload []byte) (label string, output []byte, err error) {
	var e referenceEntry
	if err := cbor.Unmarshal(payload, &e); err != nil {
		return "", nil, err
	}
	if e.StepCompleted == nil || e.StepCompleted.Output == nil {
		return "", nil, errNotAJournalRecord
	}
	if err := cbor.Unmarshal(e.StepCompleted.Output, &output); err == nil {
		return e.StepCompleted.Label, output, nil
	}
	var ints []uint64
	if err := cbor.Unmarshal(e.StepCompleted.Output, &ints); err != nil {
		return "", nil, fmt.Errorf("output is neither bytes nor an array of bytes: %w", err)
	}
	output = make([]byte, len(ints))
	for i, n := range ints {
		if n > 255 {
			return "", nil, fmt.Errorf("output element %d is %d, not a byte", i, n)
		}
		output[i] = byte(n)
	}
	return e.StepCompleted.Label, output, nil
}

// replay reads the journal for the run's conversation into the outputs of
// the completed steps. Only the workflow's own labels are kept, the last
// record of each winning, so a journal full of junk costs one output per
// step. Under a verifier only events the orchestrator signed count, and a
// recorded output the step's Verify refuses does not: the step runs again.
func (r *run) replay(ctx context.Context) error {
	t := r.c.Transport()
	topic := r.journalTopic
	if err := t.EnsureTopics(ctx, 1, topic); err != nil {
		return fmt.Errorf("workflow: journal: %w", err)
	}
	v := r.w.Verifier
	if v == nil {
		v = r.c.Verifier()
	}
	steps := map[string]*Step{}
	for i := range r.w.Steps {
		steps[r.w.Steps[i].Label] = &r.w.Steps[i]
	}
	found := map[string][]byte{}
	_, err := logscan.Topic(ctx, t, topic, nil, func(rec *runtime.Incoming) {
		m, err := runtime.DecodeRecord(topic, rec, 0)
		if err != nil {
			return
		}
		label, output, undone, ok := r.entry(m, v)
		if _, ours := steps[label]; !ok || !ours {
			return
		}
		if undone {
			delete(found, label)
		} else {
			found[label] = output
		}
	})
	if err != nil {
		return fmt.Errorf("workflow: journal: %w", err)
	}
	for label, output := range found {
		if s := steps[label]; s.Verify != nil && !s.Verify(output) {
			r.c.Logger().Warn("journaled output fails the step's verification; running the step again", "run", r.id.String(), "step", label)
			r.refused++
			continue
		}
		r.outputs[label] = output
	}
	return nil
}

// entry reads m as a journal record of this run, under verifier v when it
// is not nil: a completed step and its output, or an undone one. Refusals
// are counted.
func (r *run) entry(m *runtime.Message, v runtime.Verifier) (label string, output []byte, undone, ok bool) {
	if m.Envelope == nil {
		if m.Provenance.Conversation != r.id {
			return "", nil, false, false
		}
		label, output, err := decodeReference(m.Payload)
		if err != nil {
			return "", nil, false, false
		}
		if v != nil {
			r.refused++ // a plain record carries no signature
			return "", nil, false, false
		}
		return label, output, false, true
	}
	env := m.Envelope
	op := m.Operation()
	if env.Conversation != r.id || (op != OperationStepCompleted && op != OperationStepCompensated) {
		return "", nil, false, false
	}
	var e journalEntry
	if cbor.Unmarshal(env.Body, &e) != nil {
		return "", nil, false, false
	}
	if v != nil {
		verified, err := m.Verify(v)
		if err != nil || verified.Principal != r.w.Name {
			r.c.Logger().Warn("ignoring a journal record not signed by the orchestrator", "run", r.id.String(), "step", e.Label, "error", err, "principal", verified.Principal)
			r.refused++
			return "", nil, false, false
		}
	}
	return e.Label, e.Output, op == OperationStepCompensated, true
}

// journalEvent appends the signed journal event op for label, within
// journalWait even when ctx ended.
func (r *run) journalEvent(ctx context.Context, op, label string, output []byte) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalWait)
	defer cancel()
	body, err := cbor.Marshal(journalEntry{Label: label, Output: output})
	if err != nil {
		return fmt.Errorf("workflow: journal %s: %w", label, err)
	}
	if _, err := r.c.Send(ctx, runtime.Out{Kind: wire.KindEvent, Topic: r.journalTopic, From: r.w.Name, Body: body}, runtime.WithConversation(r.id), runtime.WithOperation(op), runtime.WithContentType(wire.ContentCBOR), runtime.WithSigningKey(r.w.SigningKey)); err != nil {
		return fmt.Errorf("workflow: journal %s: %w", label, err)
	}
	return nil
}

// journalRun appends the run-level record op (a start or an end), signed
// like the steps' records, within journalWait even when ctx ended. It is
// for people reading the journal: a failure is logged, never the run's.
func (r *run) journalRun(ctx context.Context, op string, rec RunRecord) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalWait)
	defer cancel()
	body, err := cbor.Marshal(rec)
	if err == nil {
		_, err = r.c.Send(ctx, runtime.Out{Kind: wire.KindEvent, Topic: r.journalTopic, From: r.w.Name, Body: body}, runtime.WithConversation(r.id), runtime.WithOperation(op), runtime.WithContentType(wire.ContentCBOR), runtime.WithSigningKey(r.w.SigningKey))
	}
	if err != nil {
		r.c.Logger().Warn("cannot journal the run's "+op, "run", r.id.String(), "error", err)
	}
}

// journal records that label completed with output, in both forms. It is
// written even when ctx ended meanwhile (within journalWait), so that a
// resumed run does not redo a step whose effect happened.
func (r *run) journal(ctx context.Context, label string, output []byte) error {
	if err := r.journalEvent(ctx, OperationStepCompleted, label, output); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), journalWait)
	defer cancel()
	ref, err := referenceOutput(label, output)
	if err != nil {
		return fmt.Errorf("workflow: journal %s: %w", label, err)
	}
	if _, err := r.c.SendPlain(ctx, r.journalTopic, wire.Provenance{Conversation: r.id, Agent: r.w.Name}, ref); err != nil {
		return fmt.Errorf("workflow: journal %s: %w", label, err)
	}
	return nil
}
