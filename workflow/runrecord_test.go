package workflow_test

import (
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
	"github.com/lasergo/laser/workflow"
)

// runRecords reads the run-level records of run from w's journal, in order.
func runRecords(t *testing.T, w *featuretest.WorkflowWorld, run wire.ID) (ops []string, recs []workflow.RunRecord) {
	t.Helper()
	tr := w.Client.Transport()
	parts, err := tr.Partitions(w.Ctx, w.Journal)
	if err != nil {
		t.Fatal(err)
	}
	var raw []runtime.Incoming
	for p := range parts {
		end, err := tr.NextOffset(w.Ctx, w.Journal, p)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := tr.ReadRange(w.Ctx, w.Journal, p, 0, int(end))
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, recs...)
	}
	for i := range raw {
		m, err := runtime.DecodeRecord(w.Journal, &raw[i], 0)
		if err != nil || m.Envelope == nil || m.Envelope.Conversation != run {
			continue
		}
		if op := m.Operation(); op == workflow.OperationRunStarted || op == workflow.OperationRunFinished {
			var rec workflow.RunRecord
			if err := cbor.Unmarshal(m.Body(), &rec); err != nil {
				t.Fatal(err)
			}
			ops, recs = append(ops, op), append(recs, rec)
		}
	}
	return ops, recs
}

func TestRunJournalsItsStartAndItsCompletion(t *testing.T) {
	w := newWorld(t)
	w.Worker("drafter", "", nil)
	wf := w.Workflow(workflow.Step{Label: "draft", Route: registry.To("drafter")})
	wf.Budget.Invocations = 5
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		t.Fatal(err)
	}
	ops, recs := runRecords(t, w, out.RunID)
	if len(ops) != 2 || ops[0] != workflow.OperationRunStarted || ops[1] != workflow.OperationRunFinished {
		t.Fatalf("run records %v, want a start and an end", ops)
	}
	if len(recs[0].Steps) != 1 || recs[0].Steps[0] != "draft" || recs[0].BudgetInvocations != 5 {
		t.Fatalf("start %+v, want step draft and a budget of 5 invocations", recs[0])
	}
	if recs[1].Status != workflow.StatusCompleted || recs[1].SpentInvocations != 1 || recs[1].Error != "" {
		t.Fatalf("end %+v, want completed after 1 invocation", recs[1])
	}
}

func TestRunJournalsAFailureAsFailedOrCompensated(t *testing.T) {
	w := newWorld(t)
	w.Worker("drafter", "", nil)
	refuse := func([]byte) bool { return false }
	for _, tc := range []struct {
		name       string
		compensate func([]byte) []byte
		want       string
	}{
		{"nothing to undo", nil, workflow.StatusFailed},
		{"undone", func(out []byte) []byte { return append([]byte("undo "), out...) }, workflow.StatusCompensated},
	} {
		wf := w.Workflow(
			workflow.Step{Label: "draft", Route: registry.To("drafter"), Compensate: tc.compensate},
			workflow.Step{Label: "review", After: []string{"draft"}, Route: registry.To("drafter"), Verify: refuse},
		)
		wf.RunID = w.Client.IDs().NewID()
		if _, err := wf.Run(w.Ctx, w.Client); err == nil {
			t.Fatalf("%s: the run succeeded", tc.name)
		}
		_, recs := runRecords(t, w, wf.RunID)
		if len(recs) != 2 || recs[1].Status != tc.want || recs[1].Error == "" {
			t.Fatalf("%s: run records %+v, want an end %s with its error", tc.name, recs, tc.want)
		}
	}
}
