package featuretest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
	"github.com/lasergo/laser/workflow"
)

// Workflow runs the rules of durable workflows (package workflow), each
// scenario on a fresh transport from newTransport and with topics of its own.
func Workflow(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	RunScenarios(t, newTransport, NewWorkflowWorld, []Scenario[*WorkflowWorld]{
		{Name: "DependenciesRunInOrderAndThreadOutputs", Fn: workflowOrder},
		{Name: "CyclesUnknownStepsAndBroadcastsAreRefused", Fn: workflowInvalid},
		{Name: "AllCapableStepJoinsEveryReply", Fn: workflowAllCapable},
		{Name: "ResumedRunSkipsJournaledSteps", Fn: workflowResume},
		{Name: "InvocationsBudgetBreachCompensatesInReverse", Fn: workflowInvocations},
		{Name: "WallClockBudgetBelowTheFloorIsExceeded", Fn: workflowWallClock},
		{Name: "TokensBudgetCountsReplyUsage", Fn: workflowTokens},
		{Name: "FailedVerificationFailsTheStepAndCompensates", Fn: workflowVerify},
		{Name: "IndependentStepsRunConcurrently", Fn: workflowConcurrent},
		{Name: "CancelledRunCompensatesNothingAndResumes", Fn: workflowCancelled},
		{Name: "CapabilityStepWithoutARegistryIsRefusedBeforeAnyStepRuns", Fn: workflowNoRegistry},
		{Name: "ResumesAJournalTheReferenceWrote", Fn: workflowReferenceJournal},
		{Name: "WritesTheJournalRecordTheReferenceReads", Fn: workflowWritesReferenceJournal},
		{Name: "UnderAVerifierOnlyTheOrchestratorsSignedJournalCounts", Fn: workflowVerifiedJournal},
		{Name: "JournaledOutputFailingVerifyRunsTheStepAgain", Fn: workflowJournalVerify},
		{Name: "ResumedRunRedoesACompensatedStep", Fn: workflowRedoCompensated},
	})
}

// WorkflowWorld is a scenario's topics and worker agents; package workflow's
// crash and run tests reuse it.
type WorkflowWorld struct {
	*World
	Inbox, Replies, Journal string

	mu      sync.Mutex
	handled map[string][]string // agent → bodies it handled
	hooks   map[string]func(body string) (string, bool)
}

// NewWorkflowWorld creates the scenario's topics.
func NewWorkflowWorld(w *World) *WorkflowWorld {
	x := &WorkflowWorld{World: w, Inbox: Name("inbox"), Replies: Name("replies"), Journal: Name("journal"),
		handled: map[string][]string{}, hooks: map[string]func(string) (string, bool){}}
	if err := w.Tr.EnsureTopics(w.Ctx, 2, x.Inbox, x.Replies, x.Journal); err != nil {
		w.T.Fatal(err)
	}
	return x
}

// Worker starts agent id answering "<id>(<body>)", advertising skill when
// it is not empty. hook, when set, decides the answer instead; false stays
// silent.
func (w *WorkflowWorld) Worker(id, skill string, hook func(body string) (string, bool)) {
	w.T.Helper()
	if skill != "" {
		w.Publish(id, Skill(skill))
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
	// The test's context has ended when cleanups run: wait for the agent's stop.
	w.T.Cleanup(func() { _ = h.Stop() })
}

// Counter starts agent id answering "counted" with the given token usage,
// as an LLM-backed agent would.
func (w *WorkflowWorld) Counter(id string, in, out uint64) {
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
	// The test's context has ended when cleanups run: wait for the agent's stop.
	w.T.Cleanup(func() { _ = h.Stop() })
}

// Handled returns the bodies agent handled.
func (w *WorkflowWorld) Handled(agent string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.handled[agent])
}

// Workflow returns a workflow over the world's topics.
func (w *WorkflowWorld) Workflow(steps ...workflow.Step) *workflow.Workflow {
	return &workflow.Workflow{Name: "planner", Steps: steps, Inbox: w.Inbox, Journal: w.Journal, ReplyTopic: w.Replies,
		Registry: w.Registry(registry.Config{})}
}

func workflowOrder(w *WorkflowWorld) {
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

func workflowInvalid(w *WorkflowWorld) {
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

func workflowAllCapable(w *WorkflowWorld) {
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

func workflowResume(w *WorkflowWorld) {
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

func workflowInvocations(w *WorkflowWorld) {
	w.Worker("drafter", "", nil)
	w.Worker("editor", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "draft", Route: registry.To("drafter"), Compensate: func(out []byte) []byte { return []byte("undo " + string(out)) }},
		workflow.Step{Label: "edit", After: []string{"draft"}, Route: registry.To("editor")},
	)
	wf.Budget.Invocations = 1
	_, err := wf.Run(w.Ctx, w.Client)
	var be *workflow.BudgetExceededError
	if !errors.As(err, &be) || be.Ceiling != "invocations" {
		w.T.Fatalf("run: %v, want an invocations BudgetExceededError", err)
	}
	if got := w.Handled("drafter"); !slices.Equal(got, []string{"draft", "undo drafter(draft)"}) {
		w.T.Fatalf("drafter handled %q, want the step then exactly one compensation", got)
	}
	if len(w.Handled("editor")) != 0 {
		w.T.Fatal("the step past the budget was dispatched")
	}
}

func workflowWallClock(w *WorkflowWorld) {
	w.Worker("drafter", "", nil)
	wf := w.Workflow(workflow.Step{Label: "draft", Route: registry.To("drafter")})
	wf.Budget.WallClock = workflow.MinWallClock / 2
	_, err := wf.Run(w.Ctx, w.Client)
	var be *workflow.BudgetExceededError
	if !errors.As(err, &be) || be.Ceiling != "wall clock" {
		w.T.Fatalf("run: %v, want a wall-clock BudgetExceededError", err)
	}
	if len(w.Handled("drafter")) != 0 {
		w.T.Fatal("a step started with less than the minimum wall clock left")
	}
}

func workflowVerify(w *WorkflowWorld) {
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

func workflowConcurrent(w *WorkflowWorld) {
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

func workflowTokens(w *WorkflowWorld) {
	w.Counter("counter", 60, 50)
	w.Worker("editor", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "count", Route: registry.To("counter")},
		workflow.Step{Label: "edit", After: []string{"count"}, Route: registry.To("editor")},
	)
	wf.Budget.Tokens = 100
	_, err := wf.Run(w.Ctx, w.Client)
	var be *workflow.BudgetExceededError
	if !errors.As(err, &be) || be.Ceiling != "tokens" || be.Spent != 110 || be.Limit != 100 {
		w.T.Fatalf("run: %v, want a tokens BudgetExceededError spending 110 of 100", err)
	}
	if len(w.Handled("editor")) != 0 {
		w.T.Fatal("a step ran after the token budget was spent")
	}
}

// Cancelling a run while a step is in flight stops it without undoing the
// steps it completed: the journal records them, so the resumed run skips
// them and completes the rest, and the world matches the journal.
func workflowCancelled(w *WorkflowWorld) {
	w.Worker("drafter", "", nil)
	started := make(chan struct{}, 1)
	var calls sync.Mutex
	n := 0
	w.Worker("editor", "", func(body string) (string, bool) {
		calls.Lock()
		defer calls.Unlock()
		n++
		if n == 1 {
			started <- struct{}{}
			return "", false // the first run's edit never answers
		}
		return "edited " + body, true
	})
	steps := []workflow.Step{
		{Label: "draft", Route: registry.To("drafter"), Compensate: func(out []byte) []byte { return []byte("undo " + string(out)) }},
		{Label: "edit", After: []string{"draft"}, Route: registry.To("editor")},
	}
	ctx, cancel := context.WithCancel(w.Ctx)
	defer cancel()
	wf := w.Workflow(steps...)
	wf.RunID = w.Client.IDs().NewID()
	errs := make(chan error, 1)
	go func() {
		_, err := wf.Run(ctx, w.Client)
		errs <- err
	}()
	<-started
	cancel()
	err := <-errs
	var stopped *workflow.StoppedError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &stopped) || stopped.RunID != wf.RunID {
		w.T.Fatalf("cancelled run: %v, want a StoppedError matching context.Canceled naming the run", err)
	}
	if got := w.Handled("drafter"); !slices.Equal(got, []string{"draft"}) {
		w.T.Fatalf("drafter handled %q: a stopped run must not compensate", got)
	}
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if !slices.Equal(out.Skipped, []string{"draft"}) || string(out.Outputs["edit"]) != "edited drafter(draft)" {
		w.T.Fatalf("resumed run skipped %v with outputs %q", out.Skipped, out.Outputs)
	}
	if got := w.Handled("drafter"); !slices.Equal(got, []string{"draft"}) {
		w.T.Fatalf("drafter handled %q, want its one step", got)
	}
}

// A capability route needs the workflow's Registry: without one it can
// never resolve, which is ErrInvalid before any step is dispatched.
func workflowNoRegistry(w *WorkflowWorld) {
	w.Worker("drafter", "", nil)
	for name, route := range map[string]registry.Route{"to one capable": registry.ToCapable("review", registry.Policy{}), "to all capable": registry.AllCapable("review")} {
		wf := w.Workflow(workflow.Step{Label: "draft", Route: registry.To("drafter")}, workflow.Step{Label: "review", After: []string{"draft"}, Route: route})
		wf.Registry = nil
		if _, err := wf.Run(w.Ctx, w.Client); !errors.Is(err, workflow.ErrInvalid) {
			w.T.Errorf("%s without a registry: %v, want ErrInvalid", name, err)
		}
	}
	if got := w.Handled("drafter"); len(got) != 0 {
		w.T.Fatalf("drafter handled %q before the route was refused", got)
	}
}

// The reference's journal records, built by hand from its format (see
// sdk/src/agent/workflow.rs: the enum WorkflowJournalEntry, variant
// StepCompleted { label: String, output: Vec<u8> }, encoded by
// laser_wire::framing::encode_named, that is ciborium's serde CBOR: an
// externally tagged enum is a one-entry map from the variant's name to its
// fields as a map in declaration order). A plain record (send_agent) whose
// provenance names the run's conversation carries it.
//
// rustJournalRecord is label "draft", output "ok", as the Rust SDK writes
// it: serde serializes Vec<u8> as a sequence, so the output is an array of
// integers.
var rustJournalRecord = []byte{
	0xa1,                                                                  // map, 1 entry
	0x6d, 'S', 't', 'e', 'p', 'C', 'o', 'm', 'p', 'l', 'e', 't', 'e', 'd', // text(13) "StepCompleted"
	0xa2,                          // map, 2 entries
	0x65, 'l', 'a', 'b', 'e', 'l', // text(5) "label"
	0x65, 'd', 'r', 'a', 'f', 't', // text(5) "draft"
	0x66, 'o', 'u', 't', 'p', 'u', 't', // text(6) "output"
	0x82, 0x18, 'o', 0x18, 'k', // array(2): uint 111, uint 107
}

// tsJournalRecord is label "edit", output "ok2", as the TypeScript port
// writes it (foreign/typescript/src/agent/workflow.ts, encodeJournalEntry):
// the output is a byte string, which the Rust decoder reads too.
var tsJournalRecord = []byte{
	0xa1,
	0x6d, 'S', 't', 'e', 'p', 'C', 'o', 'm', 'p', 'l', 'e', 't', 'e', 'd',
	0xa2,
	0x65, 'l', 'a', 'b', 'e', 'l',
	0x64, 'e', 'd', 'i', 't', // text(4) "edit"
	0x66, 'o', 'u', 't', 'p', 'u', 't',
	0x43, 'o', 'k', '2', // bytes(3) "ok2"
}

func (w *WorkflowWorld) plainJournal(run wire.ID, payload []byte) {
	w.T.Helper()
	if _, err := w.Client.SendPlain(w.Ctx, w.Journal, wire.Provenance{Conversation: run}, payload); err != nil {
		w.T.Fatal(err)
	}
}

// A run a Rust or TypeScript orchestrator started resumes here: their
// plain StepCompleted records count as completed steps.
func workflowReferenceJournal(w *WorkflowWorld) {
	w.Worker("drafter", "", nil)
	w.Worker("editor", "", nil)
	w.Worker("publisher", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "draft", Route: registry.To("drafter")},
		workflow.Step{Label: "edit", After: []string{"draft"}, Route: registry.To("editor")},
		workflow.Step{Label: "publish", After: []string{"edit"}, Route: registry.To("publisher")},
	)
	wf.RunID = w.Client.IDs().NewID()
	w.plainJournal(wf.RunID, rustJournalRecord)
	w.plainJournal(wf.RunID, tsJournalRecord)
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if !slices.Equal(out.Skipped, []string{"draft", "edit"}) || string(out.Outputs["draft"]) != "ok" || string(out.Outputs["publish"]) != "publisher(ok2)" {
		w.T.Fatalf("resuming the reference's journal: skipped %v, outputs %q", out.Skipped, out.Outputs)
	}
	if len(w.Handled("drafter")) != 0 || len(w.Handled("editor")) != 0 {
		w.T.Fatal("a step the reference journaled was dispatched again")
	}
}

// Each completed step is also journaled as the reference's plain record,
// its output a byte string (what both the Rust SDK and the TypeScript port
// read): byte for byte the TypeScript form.
func workflowWritesReferenceJournal(w *WorkflowWorld) {
	w.Worker("editor", "", func(string) (string, bool) { return "ok2", true })
	wf := w.Workflow(workflow.Step{Label: "edit", Route: registry.To("editor")})
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	var plain [][]byte
	parts, err := w.Tr.Partitions(w.Ctx, w.Journal)
	if err != nil {
		w.T.Fatal(err)
	}
	for p := range parts {
		recs, err := w.Tr.ReadRange(w.Ctx, w.Journal, p, 0, 100)
		if err != nil {
			w.T.Fatal(err)
		}
		for i := range recs {
			m, err := runtime.DecodeRecord(w.Journal, &recs[i], 0)
			if err == nil && m.Envelope == nil && m.Provenance.Conversation == out.RunID {
				plain = append(plain, m.Payload)
			}
		}
	}
	if len(plain) != 1 || !bytes.Equal(plain[0], tsJournalRecord) {
		w.T.Fatalf("plain journal records %x, want one: %x", plain, tsJournalRecord)
	}
}

// journalEvent publishes an unsigned step_completed event for label, as
// anyone who can write the journal topic can.
func (w *WorkflowWorld) journalEvent(run wire.ID, label, output string) {
	w.T.Helper()
	body, err := cbor.Marshal(map[string]any{"label": label, "output": []byte(output)})
	if err != nil {
		w.T.Fatal(err)
	}
	if _, err := w.Client.Send(w.Ctx, runtime.Out{Kind: wire.KindEvent, Topic: w.Journal, From: "planner", Body: body}, runtime.WithConversation(run), runtime.WithOperation(workflow.OperationStepCompleted), runtime.WithContentType(wire.ContentCBOR)); err != nil {
		w.T.Fatal(err)
	}
}

// Under a verifier one forged journal record does not make a resumed run
// skip its fraud check: only records the orchestrator signed count, and
// the run reports the ones it refused.
func workflowVerifiedJournal(w *WorkflowWorld) {
	planner, peer := SeededKey(7), SeededKey(8)
	keys := sign.NewRegistry()
	if err := keys.Enroll("planner", planner.Public()); err != nil {
		w.T.Fatal(err)
	}
	if err := keys.Enroll("peer", peer.Public()); err != nil {
		w.T.Fatal(err)
	}
	w.Worker("drafter", "", nil)
	w.Worker("checker", "", nil)
	steps := []workflow.Step{
		{Label: "draft", Route: registry.To("drafter")},
		{Label: "check", After: []string{"draft"}, Route: registry.To("checker")},
	}
	wf := w.Workflow(steps...)
	wf.RunID, wf.Verifier, wf.SigningKey = w.Client.IDs().NewID(), keys, planner
	w.journalEvent(wf.RunID, "check", "no fraud")                                                 // unsigned event
	w.plainJournal(wf.RunID, []byte("\xa1\x6dStepCompleted\xa2\x65label\x65check\x66output\x40")) // unsigned plain record
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if got := w.Handled("checker"); len(got) != 1 || out.JournalRefused != 2 {
		w.T.Fatalf("checker handled %q, %d journal records refused; want the check run once and both forgeries refused", got, out.JournalRefused)
	}
	// The run's own records are signed: resuming it under the verifier
	// skips both steps.
	again, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if !slices.Equal(again.Skipped, []string{"draft", "check"}) || len(w.Handled("checker")) != 1 {
		w.T.Fatalf("resumed signed run skipped %v; checker handled %q", again.Skipped, w.Handled("checker"))
	}
}

// A step's Verify also judges the output the journal records for it: a
// journaled output it refuses does not complete the step, which runs again.
func workflowJournalVerify(w *WorkflowWorld) {
	w.Worker("checker", "", func(string) (string, bool) { return "approved", true })
	wf := w.Workflow(workflow.Step{Label: "check", Route: registry.To("checker"),
		Verify: func(out []byte) bool { return string(out) == "approved" }})
	wf.RunID = w.Client.IDs().NewID()
	w.journalEvent(wf.RunID, "check", "forged")
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if len(out.Skipped) != 0 || string(out.Outputs["check"]) != "approved" || out.JournalRefused != 1 || len(w.Handled("checker")) != 1 {
		w.T.Fatalf("skipped %v, outputs %q, %d refused; want the check run again", out.Skipped, out.Outputs, out.JournalRefused)
	}
}

// A failed run's compensations are journaled: resuming it runs the undone
// step again instead of skipping a step whose effect is gone.
func workflowRedoCompensated(w *WorkflowWorld) {
	w.Worker("drafter", "", nil)
	w.Worker("editor", "", nil)
	wf := w.Workflow(
		workflow.Step{Label: "draft", Route: registry.To("drafter"), Compensate: func(out []byte) []byte { return []byte("undo " + string(out)) }},
		workflow.Step{Label: "edit", After: []string{"draft"}, Route: registry.To("editor")},
	)
	wf.RunID = w.Client.IDs().NewID()
	wf.Budget.Invocations = 1
	var be *workflow.BudgetExceededError
	if _, err := wf.Run(w.Ctx, w.Client); !errors.As(err, &be) {
		w.T.Fatalf("first run: %v, want a budget breach", err)
	}
	wf.Budget.Invocations = 0
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		w.T.Fatal(err)
	}
	if len(out.Skipped) != 0 || string(out.Outputs["edit"]) != "editor(drafter(draft))" {
		w.T.Fatalf("resumed run skipped %v with outputs %q; want the compensated draft run again", out.Skipped, out.Outputs)
	}
	if got := w.Handled("drafter"); !slices.Equal(got, []string{"draft", "undo drafter(draft)", "draft"}) {
		w.T.Fatalf("drafter handled %q: want the step, its undo, and the step again", got)
	}
}
