package main

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
	"github.com/lasergo/laser/workflow"
)

// The workflows page folds the journal into runs: each run's status from
// its start and end records, its steps with their outputs decoded, the
// budget and what was spent, and each record's bytes a click away.

// runView is one workflow run.
type runView struct {
	ID string
	// Status is completed, failed, compensated, stopped, running (a start
	// and no end) or unknown (no run record: an older or another SDK's
	// orchestrator).
	Status   string
	Started  string
	Finished string
	Error    string
	Budget   string
	Spent    string
	Steps    []stepView
	Done     int
	last     uint64
}

// stepView is one step of a run as its journal records it.
type stepView struct {
	Label string
	// State is completed, compensated or incomplete (named by the start
	// record, not journaled).
	State  string
	At     string
	Output string
	// Format is json, text, cbor as json or bytes (Output then says how
	// many).
	Format string
	// Journal is the record's bytes in hex, cut to shownBody.
	Journal string
}

func (c *console) workflowsPage(w http.ResponseWriter, r *http.Request) {
	release, ok := c.scanning(w, r)
	if !ok {
		return
	}
	defer release()
	runs, err := c.workflowRuns(r.Context(), runtime.TopicWorkflowJournal)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	c.render(w, http.StatusOK, "workflows", struct {
		Runs  []*runView
		Depth int
	}{runs, scanDepth})
}

// maxRuns bounds the runs the page folds; the newest are kept.
const maxRuns = 200

// workflowRuns folds the newest scanDepth records of each partition of
// journal into runs, newest first.
func (c *console) workflowRuns(ctx context.Context, journal string) ([]*runView, error) {
	parts, err := c.t.Partitions(ctx, journal)
	if err != nil {
		return nil, nil // no journal: no run
	}
	runs := map[string]*runView{}
	budget := newBodyBudget()
	for p := range parts {
		next, err := c.t.NextOffset(ctx, journal, p)
		if err != nil {
			return nil, err
		}
		for from := next - min(next, scanDepth); from < next; {
			recs, err := c.t.ReadRange(ctx, journal, p, from, int(min(next-from, 500)))
			if err != nil {
				return nil, err
			}
			if len(recs) == 0 {
				break
			}
			for i := range recs {
				foldJournal(runs, journal, &recs[i], budget)
			}
			from = recs[len(recs)-1].Offset + 1
		}
	}
	out := make([]*runView, 0, len(runs))
	for _, run := range runs {
		run.finish()
		out = append(out, run)
	}
	slices.SortFunc(out, func(a, b *runView) int { return cmp.Or(cmp.Compare(b.last, a.last), cmp.Compare(a.ID, b.ID)) })
	if len(out) > maxRuns {
		out = out[:maxRuns]
	}
	return out, nil
}

// foldJournal adds one journal record to its run.
func foldJournal(runs map[string]*runView, journal string, rec *runtime.Incoming, b *bodyBudget) {
	m, err := runtime.DecodeRecord(journal, rec, 0)
	if err != nil {
		return
	}
	id := m.Provenance.Conversation.String()
	run := runs[id]
	if run == nil {
		if len(runs) >= 4*maxRuns {
			return // a journal of junk runs costs a bounded map
		}
		run = &runView{ID: id}
		runs[id] = run
	}
	run.last = max(run.last, rec.Timestamp)
	at := pageFuncs["micros"].(func(uint64) string)(rec.Timestamp)
	if m.Envelope == nil {
		// The reference's plain form of a completed step, which the Go
		// orchestrator writes beside its event: shown only for a step no
		// event recorded (a Rust or TypeScript orchestrator's run).
		if label, output, ok := referenceStep(m.Payload); ok && !slices.ContainsFunc(run.Steps, func(s stepView) bool { return s.Label == label && s.State != "incomplete" }) {
			run.step(label).completed(at, output, rec.Payload, b)
		}
		return
	}
	switch m.Operation() {
	case workflow.OperationRunStarted, workflow.OperationRunFinished:
		var rr workflow.RunRecord
		if cbor.Unmarshal(m.Body(), &rr) != nil {
			return
		}
		if m.Operation() == workflow.OperationRunStarted {
			run.Started, run.Status, run.Finished, run.Error = at, "running", "", ""
			run.Budget = budgetText(rr.BudgetTokens, rr.BudgetInvocations, rr.BudgetWallMicros, "no budget")
			for _, label := range rr.Steps {
				run.step(label)
			}
			return
		}
		run.Finished, run.Status, run.Error = at, rr.Status, truncate(rr.Error, 500)
		run.Spent = budgetText(rr.SpentTokens, rr.SpentInvocations, rr.SpentWallMicros, "nothing")
	case workflow.OperationStepCompleted, workflow.OperationStepCompensated:
		var e struct {
			Label  string `cbor:"label"`
			Output []byte `cbor:"output"`
		}
		if cbor.Unmarshal(m.Body(), &e) != nil {
			return
		}
		s := run.step(e.Label)
		if m.Operation() == workflow.OperationStepCompensated {
			s.State, s.At = "compensated", at
			return
		}
		s.completed(at, e.Output, rec.Payload, b)
	}
}

// step returns the run's step label, added pending when new.
func (r *runView) step(label string) *stepView {
	for i := range r.Steps {
		if r.Steps[i].Label == label {
			return &r.Steps[i]
		}
	}
	if len(r.Steps) >= 256 {
		return &stepView{} // beyond any real workflow: not kept
	}
	r.Steps = append(r.Steps, stepView{Label: truncate(label, 200), State: "incomplete"})
	return &r.Steps[len(r.Steps)-1]
}

// completed records the step's output, decoded for people, and the
// journal record's bytes.
func (s *stepView) completed(at string, output, record []byte, b *bodyBudget) {
	s.State, s.At = "completed", at
	s.Output, s.Format = decodeOutput(output)
	if len(record) > shownBody/2 {
		record = record[:shownBody/2]
	}
	if b.left <= 0 {
		s.Output, s.Format = "(not shown: the page holds enough)", "omitted"
		return
	}
	s.Journal = hex.EncodeToString(record)
	if n := min(shownBody, b.left); len(s.Output) > n {
		s.Output = strings.Clone(truncate(s.Output, n))
	}
	b.left -= len(s.Output) + len(s.Journal)
}

// finish settles the run's status and counts its completed steps.
func (r *runView) finish() {
	if r.Status == "" {
		r.Status = "unknown"
	}
	for _, s := range r.Steps {
		if s.State == "completed" {
			r.Done++
		}
	}
}

// decodeOutput renders a step's output: JSON indented, text as it is, CBOR
// as JSON, anything else as a byte count.
func decodeOutput(b []byte) (string, string) {
	if len(b) == 0 {
		return "(empty)", "text"
	}
	if json.Valid(b) {
		if out, format := showBody(b, wire.ContentJSON); format == "json" {
			return out, format
		}
	}
	if utf8.Valid(b) && !strings.ContainsFunc(string(b), func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' && r != '\r' }) {
		return string(b), "text"
	}
	if out, format := showBody(b, wire.ContentCBOR); format == "cbor as json" {
		return out, format
	}
	return fmt.Sprintf("%d bytes", len(b)), "bytes"
}

// referenceStep reads the reference's plain journal record: the label and
// output of a completed step (output a byte string or an array of bytes).
func referenceStep(payload []byte) (string, []byte, bool) {
	var e struct {
		StepCompleted *struct {
			Label  string          `cbor:"label"`
			Output cbor.RawMessage `cbor:"output"`
		} `cbor:"StepCompleted"`
	}
	if cbor.Unmarshal(payload, &e) != nil || e.StepCompleted == nil {
		return "", nil, false
	}
	var out []byte
	if cbor.Unmarshal(e.StepCompleted.Output, &out) == nil {
		return e.StepCompleted.Label, out, true
	}
	var ints []uint64
	if cbor.Unmarshal(e.StepCompleted.Output, &ints) != nil {
		return "", nil, false
	}
	out = make([]byte, 0, len(ints))
	for _, n := range ints {
		if n > 255 {
			return "", nil, false
		}
		out = append(out, byte(n))
	}
	return e.StepCompleted.Label, out, true
}

// budgetText says a budget or what was spent of one; none when all are 0.
func budgetText(tokens, invocations, wallMicros uint64, none string) string {
	var parts []string
	if tokens > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", tokens))
	}
	if invocations > 0 {
		parts = append(parts, fmt.Sprintf("%d invocation(s)", invocations))
	}
	if wallMicros > 0 {
		parts = append(parts, (time.Duration(wallMicros) * time.Microsecond).Round(time.Millisecond).String())
	}
	if len(parts) == 0 {
		return none
	}
	return strings.Join(parts, ", ")
}
