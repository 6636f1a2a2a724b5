// Package workflowtest runs the rules of durable workflows (package
// workflow) over a transport.
package workflowtest

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/registry/registrytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
	"github.com/lasergo/laser/workflow"
)

// Run runs every scenario, each on a fresh transport from newTransport and
// with topics of its own.
func Run(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	registrytest.RunScenarios(t, newTransport, NewWorld, []registrytest.Scenario[*World]{
		{Name: "DependenciesRunInOrderAndThreadOutputs", Fn: scenarioOrder},
		{Name: "CyclesUnknownStepsAndBroadcastsAreRefused", Fn: scenarioInvalid},
		{Name: "AllCapableStepJoinsEveryReply", Fn: scenarioAllCapable},
		{Name: "ResumedRunSkipsJournaledSteps", Fn: scenarioResume},
		{Name: "InvocationsBudgetBreachCompensatesInReverse", Fn: scenarioInvocations},
		{Name: "WallClockBudgetBelowTheFloorIsExceeded", Fn: scenarioWallClock},
		{Name: "TokensBudgetCountsReplyUsage", Fn: scenarioTokens},
		{Name: "FailedVerificationFailsTheStepAndCompensates", Fn: scenarioVerify},
		{Name: "IndependentStepsRunConcurrently", Fn: scenarioConcurrent},
	})
}

// World is a scenario's topics and worker agents; the crash test reuses it.
type World struct {
	*registrytest.World
	Inbox, Replies, Journal string

	mu      sync.Mutex
	handled map[string][]string // agent → bodies it handled
	hooks   map[string]func(body string) (string, bool)
}

// NewWorld creates the scenario's topics.
func NewWorld(w *registrytest.World) *World {
	x := &World{World: w, Inbox: registrytest.Name("inbox"), Replies: registrytest.Name("replies"), Journal: registrytest.Name("journal"),
		handled: map[string][]string{}, hooks: map[string]func(string) (string, bool){}}
	if err := w.Tr.EnsureTopics(w.Ctx, 2, x.Inbox, x.Replies, x.Journal); err != nil {
		w.T.Fatal(err)
	}
	return x
}

// Worker starts agent id answering "<id>(<body>)", advertising skill when
// it is not empty. hook, when set, decides the answer instead; false stays
// silent.
func (w *World) Worker(id, skill string, hook func(body string) (string, bool)) {
	w.T.Helper()
	if skill != "" {
		w.Publish(id, registrytest.Skill(skill))
	}
	a, err := w.Client.NewAgent(runtime.AgentConfig{
		ID: id, Listen: w.Inbox, Respond: w.Replies,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			body := string(c.Message().Body())
			w.mu.Lock()
			w.handled[id] = append(w.handled[id], body)
			w.mu.Unlock()
			answer, ok := id+"("+body+")", true
			if hook != nil {
				answer, ok = hook(body)
			}
			if !ok {
				return nil
			}
			return c.Respond([]byte(answer))
		}),
	})
	if err != nil {
		w.T.Fatal(err)
	}
	h := a.Start(w.Ctx)
	if err := h.Ready(w.Ctx); err != nil {
		w.T.Fatal(err)
	}
	w.T.Cleanup(func() { _ = h.Shutdown(w.Ctx) })
}

// Counter starts agent id answering "counted" with the given token usage,
// as an LLM-backed agent would.
func (w *World) Counter(id string, in, out uint64) {
	w.T.Helper()
	a, err := w.Client.NewAgent(runtime.AgentConfig{ID: id, Listen: w.Inbox,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			m := c.Message().Envelope
			env := &wire.Envelope{Kind: wire.KindResponse, Source: wire.AgentID(id), Conversation: m.Conversation, Correlation: m.Correlation,
				Body: []byte("counted"), Usage: &wire.TokenUsage{InputTokens: in, OutputTokens: out}}
			_, err := rawsend.Envelope(c, c.Client(), w.Replies, env, wire.ContentRaw)
			return err
		})})
	if err != nil {
		w.T.Fatal(err)
	}
	h := a.Start(w.Ctx)
	if err := h.Ready(w.Ctx); err != nil {
		w.T.Fatal(err)
	}
	w.T.Cleanup(func() { _ = h.Shutdown(w.Ctx) })
}

// Handled returns the bodies agent handled.
func (w *World) Handled(agent string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.handled[agent])
}

// Workflow returns a workflow over the world's topics.
func (w *World) Workflow(steps ...workflow.Step) *workflow.Workflow {
	return &workflow.Workflow{Name: "planner", Steps: steps, Inbox: w.Inbox, Journal: w.Journal, ReplyTopic: w.Replies,
		Registry: w.Registry(registry.Options{})}
}

func scenarioOrder(w *World) {
	w.Worker("drafter", "", nil)
	w.Worker("editor", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "edit", After: []string{"draft"}, Route: registry.To("editor")},
		workflow.Step{Label: "draft", Route: registry.To("drafter"), Input: func(map[string][]byte) []byte { return []byte("idea") }},
	)
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if got := string(out.Outputs["edit"]); got != "editor(drafter(idea))" {
		w.T.Fatalf("edit output %q, want editor(drafter(idea))", got)
	}
}

func scenarioInvalid(w *World) {
	for name, steps := range map[string][]workflow.Step{
		"cycle":     {{Label: "a", After: []string{"b"}, Route: registry.To("x")}, {Label: "b", After: []string{"a"}, Route: registry.To("x")}},
		"unknown":   {{Label: "a", After: []string{"ghost"}, Route: registry.To("x")}},
		"duplicate": {{Label: "a", Route: registry.To("x")}, {Label: "a", Route: registry.To("x")}},
		"broadcast": {{Label: "a", Route: registry.Broadcast()}},
	} {
		if _, err := w.Workflow(steps...).Run(w.Ctx, w.Client); !errors.Is(err, workflow.ErrInvalid) {
			w.T.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func scenarioAllCapable(w *World) {
	w.Worker("rev-a", "review", nil)
	w.Worker("rev-b", "review", nil)
	out, err := w.Workflow(workflow.Step{Label: "review", Route: registry.AllCapable("review"),
		Input: func(map[string][]byte) []byte { return []byte("d") }}).Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if got := string(out.Outputs["review"]); got != "rev-a(d)\nrev-b(d)" {
		w.T.Fatalf("all-capable output %q, want both replies joined", got)
	}
}

func scenarioResume(w *World) {
	w.Worker("drafter", "", nil)
	w.Worker("editor", "", nil)
	steps := []workflow.Step{
		{Label: "draft", Route: registry.To("drafter")},
		{Label: "edit", After: []string{"draft"}, Route: registry.To("editor")},
	}
	first, err := w.Workflow(steps...).Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	wf := w.Workflow(steps...)
	wf.RunID = first.RunID
	again, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if len(w.Handled("drafter")) != 1 || len(w.Handled("editor")) != 1 {
		w.T.Fatalf("resuming re-dispatched: drafter %v editor %v", w.Handled("drafter"), w.Handled("editor"))
	}
	if !slices.Equal(again.Skipped, []string{"draft", "edit"}) || string(again.Outputs["edit"]) != string(first.Outputs["edit"]) {
		w.T.Fatalf("resumed run skipped %v with outputs %q", again.Skipped, again.Outputs)
	}
}

func scenarioInvocations(w *World) {
	w.Worker("drafter", "", nil)
	w.Worker("editor", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "draft", Route: registry.To("drafter"), Compensate: func(out []byte) []byte { return []byte("undo " + string(out)) }},
		workflow.Step{Label: "edit", After: []string{"draft"}, Route: registry.To("editor")},
	)
	wf.Budget.Invocations = 1
	_, err := wf.Run(w.Ctx, w.Client)
	var be *workflow.BudgetExceeded
	if !errors.As(err, &be) || be.Ceiling != "invocations" {
		w.T.Fatalf("run: %v, want an invocations BudgetExceeded", err)
	}
	if got := w.Handled("drafter"); !slices.Equal(got, []string{"draft", "undo drafter(draft)"}) {
		w.T.Fatalf("drafter handled %q, want the step then exactly one compensation", got)
	}
	if len(w.Handled("editor")) != 0 {
		w.T.Fatal("the step past the budget was dispatched")
	}
}

func scenarioWallClock(w *World) {
	w.Worker("drafter", "", nil)
	wf := w.Workflow(workflow.Step{Label: "draft", Route: registry.To("drafter")})
	wf.Budget.WallClock = workflow.MinWallClock / 2
	_, err := wf.Run(w.Ctx, w.Client)
	var be *workflow.BudgetExceeded
	if !errors.As(err, &be) || be.Ceiling != "wall clock" {
		w.T.Fatalf("run: %v, want a wall-clock BudgetExceeded", err)
	}
	if len(w.Handled("drafter")) != 0 {
		w.T.Fatal("a step started with less than the minimum wall clock left")
	}
}

func scenarioVerify(w *World) {
	w.Worker("drafter", "", nil)
	w.Worker("editor", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "draft", Route: registry.To("drafter"), Compensate: func([]byte) []byte { return []byte("undo draft") }},
		workflow.Step{Label: "edit", After: []string{"draft"}, Route: registry.To("editor"),
			Verify:     func(out []byte) bool { return strings.Contains(string(out), "approved") },
			Compensate: func([]byte) []byte { return []byte("undo edit") }},
	)
	_, err := wf.Run(w.Ctx, w.Client)
	if !errors.Is(err, workflow.ErrStepFailed) {
		w.T.Fatalf("run: %v, want ErrStepFailed", err)
	}
	if got := w.Handled("drafter"); !slices.Equal(got, []string{"draft", "undo draft"}) {
		w.T.Fatalf("drafter handled %q, want its step and its compensation", got)
	}
	if got := w.Handled("editor"); !slices.Equal(got, []string{"drafter(draft)"}) {
		w.T.Fatalf("editor handled %q: the failed step must not be compensated", got)
	}
}

func scenarioConcurrent(w *World) {
	// Each worker answers only once both have their command: run one after
	// another, the first would wait forever.
	var both sync.WaitGroup
	both.Add(2)
	barrier := func(body string) (string, bool) {
		both.Done()
		ch := make(chan struct{})
		go func() { both.Wait(); close(ch) }()
		select {
		case <-ch:
			return "done", true
		case <-time.After(20 * time.Second):
			return "alone", true
		}
	}
	w.Worker("left", "", barrier)
	w.Worker("right", "", barrier)
	out, err := w.Workflow(
		workflow.Step{Label: "l", Route: registry.To("left")},
		workflow.Step{Label: "r", Route: registry.To("right")},
	).Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if string(out.Outputs["l"]) != "done" || string(out.Outputs["r"]) != "done" {
		w.T.Fatalf("outputs %q: independent steps did not run concurrently", out.Outputs)
	}
}

func scenarioTokens(w *World) {
	w.Counter("counter", 60, 50)
	w.Worker("editor", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "count", Route: registry.To("counter")},
		workflow.Step{Label: "edit", After: []string{"count"}, Route: registry.To("editor")},
	)
	wf.Budget.Tokens = 100
	_, err := wf.Run(w.Ctx, w.Client)
	var be *workflow.BudgetExceeded
	if !errors.As(err, &be) || be.Ceiling != "tokens" || be.Spent != 110 || be.Limit != 100 {
		w.T.Fatalf("run: %v, want a tokens BudgetExceeded spending 110 of 100", err)
	}
	if len(w.Handled("editor")) != 0 {
		w.T.Fatal("a step ran after the token budget was spent")
	}
}
