package workflow_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
	"github.com/lasergo/laser/workflow"
)

func newWorld(t *testing.T) *featuretest.WorkflowWorld {
	return featuretest.NewWorkflowWorld(featuretest.NewWorld(t, featuretest.EmbeddedLog(t)))
}

// TestRunningAWorkflowTwiceStartsTwoRuns: Run leaves the caller's Workflow
// as it was, so a second Run of the same value is a fresh run, not a
// resumption of the first with every step skipped.
func TestRunningAWorkflowTwiceStartsTwoRuns(t *testing.T) {
	w := newWorld(t)
	w.Worker("drafter", "", nil)
	wf := w.Workflow(workflow.Step{Label: "draft", Route: registry.To("drafter")})
	wf.Journal = "" // the default must not be written back either
	first, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		t.Fatal(err)
	}
	if wf.RunID != (wire.ID{}) || wf.Journal != "" {
		t.Fatalf("Run wrote into the workflow: run id %s, journal %q", wf.RunID, wf.Journal)
	}
	if first.RunID == (wire.ID{}) {
		t.Fatal("the outcome does not report the minted run id")
	}
}

// TestRunningAWorkflowTwiceDispatchesTwice is the same over the world's
// topics: the second run dispatches its step again.
func TestRunningAWorkflowTwiceDispatchesTwice(t *testing.T) {
	w := newWorld(t)
	w.Worker("drafter", "", nil)
	wf := w.Workflow(workflow.Step{Label: "draft", Route: registry.To("drafter")})
	first, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		t.Fatal(err)
	}
	second, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		t.Fatal(err)
	}
	if second.RunID == first.RunID || len(second.Skipped) != 0 {
		t.Fatalf("second run %s skipped %v: it resumed the first run %s", second.RunID, second.Skipped, first.RunID)
	}
	if got := w.Handled("drafter"); len(got) != 2 {
		t.Fatalf("drafter handled %q, want the step once per run", got)
	}
}

// TestConcurrentRunsOfOneWorkflowAreIndependent runs one Workflow value
// twice at once (the race detector sees any write into it).
func TestConcurrentRunsOfOneWorkflowAreIndependent(t *testing.T) {
	w := newWorld(t)
	w.Worker("drafter", "", nil)
	wf := w.Workflow(workflow.Step{Label: "draft", Route: registry.To("drafter")})
	var wg sync.WaitGroup
	ids := make([]wire.ID, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := wf.Run(w.Ctx, w.Client)
			if errs[i] = err; err == nil {
				ids[i] = out.RunID
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if ids[0] == ids[1] {
		t.Fatalf("both runs used run id %s", ids[0])
	}
}

// TestAllCapableStepFailsWhenOneAgentDoesNotAnswer: a partial fan-out is
// not a completed step, so it is neither journaled nor passed on.
func TestAllCapableStepFailsWhenOneAgentDoesNotAnswer(t *testing.T) {
	w := newWorld(t)
	w.Worker("rev-a", "review", nil)
	w.Worker("rev-b", "review", func(string) (string, bool) { return "", false })
	w.Worker("editor", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "review", Route: registry.AllCapable("review")},
		workflow.Step{Label: "edit", After: []string{"review"}, Route: registry.To("editor")},
	)
	wf.Budget.WallClock = time.Second // bounds the wait for rev-b
	_, err := wf.Run(w.Ctx, w.Client)
	if !errors.Is(err, workflow.ErrStepFailed) {
		t.Fatalf("run: %v, want ErrStepFailed for the partial fan-out", err)
	}
	if got := w.Handled("editor"); len(got) != 0 {
		t.Fatalf("editor handled %q after a partial fan-out", got)
	}
	if got := journalLabels(t, w); len(got) != 0 {
		t.Fatalf("journal records %v for a partial fan-out", got)
	}
}

// TestAllCapableStepCountsEveryReplysTokens: each fanned-out reply's usage
// counts against Budget.Tokens.
func TestAllCapableStepCountsEveryReplysTokens(t *testing.T) {
	w := newWorld(t)
	for _, id := range []string{"count-a", "count-b"} {
		w.Publish(id, featuretest.Skill("count"))
		w.Counter(id, 60, 50)
	}
	w.Worker("editor", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "count", Route: registry.AllCapable("count")},
		workflow.Step{Label: "edit", After: []string{"count"}, Route: registry.To("editor")},
	)
	wf.Budget.Tokens = 200
	_, err := wf.Run(w.Ctx, w.Client)
	var be *workflow.BudgetExceededError
	if !errors.As(err, &be) || be.Ceiling != "tokens" || be.Spent != 220 {
		t.Fatalf("run: %v, want a tokens BudgetExceededError spending 220 (2 × 110) of 200", err)
	}
	if len(w.Handled("editor")) != 0 {
		t.Fatal("a step ran after the token budget was spent")
	}
}

// TestAResumedRunDispatchesAnUnjournaledStepAgainAndCompletesIt: a step
// the journal does not record (the worker acted, the orchestrator died
// before journaling; here: the worker did not answer the first time) is
// dispatched again by the next Run call with the same run id, under a key
// that differs from the first dispatch's (so the worker's dedup does not
// drop it) but shares its RUNID/step/LABEL prefix (so the worker can make
// its effect idempotent by step), and the resumed run completes it.
func TestAResumedRunDispatchesAnUnjournaledStepAgainAndCompletesIt(t *testing.T) {
	w := newWorld(t)
	var (
		mu   sync.Mutex
		keys []string
	)
	a, err := w.Client.NewAgent(runtime.AgentConfig{ID: "editor", Listen: w.Inbox, Respond: w.Replies,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			mu.Lock()
			keys = append(keys, c.Message().Provenance.IdempotencyKey)
			first := len(keys) == 1
			mu.Unlock()
			if first {
				return nil // acted, but the answer never comes
			}
			return c.Respond([]byte("edited"))
		})})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(w.Ctx)
	if err := h.Ready(w.Ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Shutdown(w.Ctx) })
	wf := w.Workflow(workflow.Step{Label: "edit", Route: registry.To("editor")})
	wf.Budget.WallClock = 500 * time.Millisecond
	wf.RunID = w.Client.IDs().NewID()
	if _, err := wf.Run(w.Ctx, w.Client); !errors.Is(err, workflow.ErrStepFailed) {
		t.Fatalf("first run: %v, want ErrStepFailed (no answer)", err)
	}
	wf.Budget.WallClock = 0
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil || string(out.Outputs["edit"]) != "edited" {
		t.Fatalf("resumed run: %q, %v; want the step completed", out.Outputs, err)
	}
	mu.Lock()
	defer mu.Unlock()
	prefix := wf.RunID.String() + "/step/edit/"
	if len(keys) != 2 || keys[0] == keys[1] || !strings.HasPrefix(keys[0], prefix) || !strings.HasPrefix(keys[1], prefix) {
		t.Fatalf("keys %q, want two different keys starting %s", keys, prefix)
	}
}

// TestZeroRouteIsRefusedBeforeAnyStepRuns: a step without a route is
// ErrInvalid up front, not a failure after earlier steps acted.
func TestZeroRouteIsRefusedBeforeAnyStepRuns(t *testing.T) {
	w := newWorld(t)
	w.Worker("drafter", "", nil)
	_, err := w.Workflow(
		workflow.Step{Label: "draft", Route: registry.To("drafter")},
		workflow.Step{Label: "edit", After: []string{"draft"}},
	).Run(w.Ctx, w.Client)
	if !errors.Is(err, workflow.ErrInvalid) {
		t.Fatalf("run: %v, want ErrInvalid", err)
	}
	if got := w.Handled("drafter"); len(got) != 0 {
		t.Fatalf("drafter handled %q before the invalid step was refused", got)
	}
}

// TestStepCommandCarriesItsRunKeyAndExpiresWithItsWait: a step's command
// is keyed by the run id, the label and the Run call, and expires when the
// orchestrator's wait for it ends, so a late pickup is dead-lettered.
func TestStepCommandCarriesItsRunKeyAndExpiresWithItsWait(t *testing.T) {
	w := newWorld(t)
	seen := make(chan *wire.Envelope, 1)
	a, err := w.Client.NewAgent(runtime.AgentConfig{ID: "drafter", Listen: w.Inbox, Respond: w.Replies,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			seen <- c.Message().Envelope
			return c.Respond([]byte("ok"))
		})})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(w.Ctx)
	if err := h.Ready(w.Ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Shutdown(w.Ctx) })
	start := time.Now()
	out, err := w.Workflow(workflow.Step{Label: "draft", Route: registry.To("drafter")}).Run(w.Ctx, w.Client)
	if err != nil {
		t.Fatal(err)
	}
	env := <-seen
	if env.IdempotencyKey == nil || !strings.HasPrefix(string(*env.IdempotencyKey), out.RunID.String()+"/step/draft/") {
		t.Fatalf("idempotency key %v, want %s/step/draft/CALL", env.IdempotencyKey, out.RunID)
	}
	if env.DeadlineMicros == nil {
		t.Fatal("the step command carries no deadline")
	}
	if got := time.UnixMicro(int64(*env.DeadlineMicros)).Sub(start); got < workflow.MaxStepWait-10*time.Second || got > workflow.MaxStepWait+10*time.Second {
		t.Fatalf("the step command expires %s after the run started, want about %s", got, workflow.MaxStepWait)
	}
}

// TestLongStepLabelsStillRun: a label too long for the 64-byte key is
// hashed into it rather than failing the step.
func TestLongStepLabelsStillRun(t *testing.T) {
	w := newWorld(t)
	w.Worker("drafter", "", nil)
	label := strings.Repeat("a very long step label ", 5)
	out, err := w.Workflow(workflow.Step{Label: label, Route: registry.To("drafter"), Input: func(map[string][]byte) []byte { return []byte("x") }}).Run(w.Ctx, w.Client)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Outputs[label]) != "drafter(x)" {
		t.Fatalf("outputs %q", out.Outputs)
	}
}
