// Package workflow runs multi-step workflows over agents: steps with
// dependencies, each dispatched to one agent or to every capable agent, a
// journal on agent.workflow_journal so a restarted run skips the steps it
// already completed, budgets, output verification, and compensations run
// in reverse when a step fails. A run whose context ends is stopped, not
// failed: nothing is compensated, and running again with its RunID
// resumes it (see StoppedError).
//
// Unlike the reference runtime, which runs steps strictly one after
// another, independent steps run concurrently: a step starts as soon as
// every step it depends on has completed.
package workflow

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/fanout"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Spec numbers.
const (
	// MinWallClock is the least wall-clock budget a step needs to start.
	MinWallClock = 100 * time.Millisecond
	// MaxStepWait bounds one dispatch (and one compensation).
	MaxStepWait = 30 * time.Second
	// OperationStepCompleted is the journal record's operation.
	OperationStepCompleted = "workflow.step_completed"
	// OperationStepCompensated is the operation of the journal record of a
	// step whose compensation answered: a resumed run runs it again.
	OperationStepCompensated = "workflow.step_compensated"
	// OperationRunStarted and OperationRunFinished are the journal records
	// of a Run call's start and end (a RunRecord each), so a reader of the
	// journal sees runs and their status; replay ignores them.
	OperationRunStarted  = "workflow.run_started"
	OperationRunFinished = "workflow.run_finished"
)

// The statuses a run ends with, in RunRecord.Status.
const (
	StatusCompleted = "completed"
	// StatusFailed: a step failed and no compensation answered.
	StatusFailed = "failed"
	// StatusCompensated: a step failed and at least one compensation
	// answered.
	StatusCompensated = "compensated"
	// StatusStopped: the run's context ended; running again resumes it.
	StatusStopped = "stopped"
)

// RunRecord is the CBOR body of a run's start and end journal records: the
// start names the steps and the budget, the end the status, the error and
// what was spent.
type RunRecord struct {
	Steps             []string `cbor:"steps,omitempty"`
	BudgetTokens      uint64   `cbor:"budget_tokens,omitempty"`
	BudgetInvocations uint64   `cbor:"budget_invocations,omitempty"`
	BudgetWallMicros  uint64   `cbor:"budget_wall_us,omitempty"`
	Status            string   `cbor:"status,omitempty"`
	Error             string   `cbor:"error,omitempty"`
	SpentTokens       uint64   `cbor:"spent_tokens,omitempty"`
	SpentInvocations  uint64   `cbor:"spent_invocations,omitempty"`
	SpentWallMicros   uint64   `cbor:"spent_wall_us,omitempty"`
}

// ErrInvalid reports a workflow that cannot run: a cycle, an unknown or
// duplicate step, a broadcast step, a route that can never resolve. It is a
// runtime invalid error: runtime.CodeOf(err) == runtime.CodeInvalid holds.
var ErrInvalid error = &runtime.Error{Code: runtime.CodeInvalid, Msg: "workflow: invalid"}

// ErrStepFailed reports a step whose dispatch failed, completed nothing or
// failed verification.
var ErrStepFailed = errors.New("workflow: step failed")

// BudgetExceededError reports a breached budget.
type BudgetExceededError struct {
	Ceiling string // "tokens", "wall clock" or "invocations"
	Limit   uint64
	Spent   uint64
}

func (e *BudgetExceededError) Error() string {
	return fmt.Sprintf("workflow: %s budget exceeded: spent %d of %d", e.Ceiling, e.Spent, e.Limit)
}

// Budget caps a run; zero fields are unlimited.
type Budget struct {
	Tokens      uint64
	WallClock   time.Duration
	Invocations uint64
}

// Step is one unit of work.
type Step struct {
	Label string
	// After lists the labels of the steps this one needs.
	After []string
	// Route is where the step goes: To one agent, ToCapable (the policy's
	// pick) or AllCapable (every capable agent, each of which must answer;
	// their replies are joined by newlines). Broadcast is refused.
	Route registry.Route
	// Input builds the payload from the outputs of completed steps; nil
	// sends the outputs of After joined by newlines, or the label for a
	// step without dependencies (a command body cannot be empty).
	Input func(outputs map[string][]byte) []byte
	// Verify checks the output; false fails the step.
	Verify func(output []byte) bool
	// Compensate, when set, is the payload sent to the step's route to undo
	// it when a later step fails.
	Compensate func(output []byte) []byte
}

// Workflow is a set of steps run under one orchestrator id.
type Workflow struct {
	// Name is the orchestrator's agent id; commands come from it.
	Name  string
	Steps []Step
	// RunID names the run: a run with the RunID of an earlier one resumes
	// it, skipping the steps its journal records as completed. Zero mints
	// a fresh one for each Run, reported in Outcome.RunID.
	RunID  wire.ID
	Budget Budget
	// Inbox is the topic the agents listen on. Default agent.commands.
	Inbox string
	// Journal is the journal topic. Default agent.workflow_journal.
	Journal string
	// ReplyTopic is where replies come. Default agent.responses.
	ReplyTopic string
	// Registry resolves capability routes; required when a step uses one.
	Registry *registry.Registry
	// Verifier judges the journal on replay: when set, a step counts as
	// completed only by a journal record signed by the orchestrator (the
	// principal Name), and the reference's unsigned plain records are
	// ignored. Default the client's Verifier.
	Verifier runtime.Verifier
	// SigningKey signs the journal records the run writes, which a replay
	// under a verifier requires.
	SigningKey *sign.Key
}

// Outcome is a completed run.
type Outcome struct {
	RunID   wire.ID
	Outputs map[string][]byte
	// Skipped lists the steps the journal recorded as completed before this run.
	Skipped []string
	// JournalRefused counts the journal records of this run replay did not
	// trust: unverified or signed by another principal under a verifier, or
	// whose output failed the step's Verify (that step ran again).
	JournalRefused int
}

// StoppedError is the error of a run whose context ended: the steps completed
// are journaled and none is compensated, so running the workflow again with
// RunID resumes it. It matches the context's error with errors.Is.
type StoppedError struct {
	RunID wire.ID
	Err   error // the context's error
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("workflow: run %s stopped (resume it with its RunID): %v", e.RunID, e.Err)
}

// Unwrap returns the context's error.
func (e *StoppedError) Unwrap() error { return e.Err }

// order returns the steps' labels in topological order, ties in authored
// order; a cycle or an unknown dependency is ErrInvalid.
func order(steps []Step) ([]string, error) {
	index := map[string]int{}
	for i, s := range steps {
		if s.Label == "" {
			return nil, fmt.Errorf("%w: step %d has no label", ErrInvalid, i)
		}
		if _, dup := index[s.Label]; dup {
			return nil, fmt.Errorf("%w: step %q is defined twice", ErrInvalid, s.Label)
		}
		index[s.Label] = i
	}
	indeg := make([]int, len(steps))
	next := make([][]int, len(steps))
	for i, s := range steps {
		for _, d := range s.After {
			j, ok := index[d]
			if !ok {
				return nil, fmt.Errorf("%w: step %q depends on unknown step %q", ErrInvalid, s.Label, d)
			}
			indeg[i]++
			next[j] = append(next[j], i)
		}
	}
	var order []string
	var ready []int
	for i := range steps {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	for len(ready) > 0 {
		sort.Ints(ready)
		i := ready[0]
		ready = ready[1:]
		order = append(order, steps[i].Label)
		for _, j := range next[i] {
			if indeg[j]--; indeg[j] == 0 {
				ready = append(ready, j)
			}
		}
	}
	if len(order) != len(steps) {
		return nil, fmt.Errorf("%w: the steps' dependencies form a cycle", ErrInvalid)
	}
	return order, nil
}

// run is one execution's state. The resolved run id and topics live here,
// not in the caller's Workflow, so the same Workflow value can run again
// (a fresh run each time unless it names a RunID) or concurrently.
type run struct {
	w            *Workflow
	c            *runtime.Client
	id           wire.ID
	call         string // this Run call, in its commands' idempotency keys
	inbox        string
	journalTopic string
	replies      string
	start        time.Time
	mu           sync.Mutex
	outputs      map[string][]byte
	done         []string // completed this run, in completion order
	tokens       uint64
	calls        uint64
	refused      int // journal records replay did not trust
}

// Run runs the workflow: it replays the journal, then dispatches every
// step not yet completed once its dependencies are, independent steps
// concurrently. A failure stops new steps, waits for the running ones, and
// sends the compensations of the steps completed in this run in reverse
// order (best effort: a compensation that answered is journaled, so a
// resumed run redoes that step; errors are ignored). When ctx ends the run
// is stopped instead: it starts nothing more, journals the steps that still
// completed, compensates nothing and returns a *StoppedError; running again with
// its RunID resumes it. Run does not modify w; a zero
// w.RunID mints a fresh run id for this call, reported in Outcome.RunID
// (pass it as RunID to resume that run).
func (w *Workflow) Run(ctx context.Context, c *runtime.Client) (*Outcome, error) {
	if _, err := order(w.Steps); err != nil {
		return nil, err
	}
	if _, err := wire.ParseAgentID(w.Name); err != nil {
		return nil, fmt.Errorf("%w: name: %w", ErrInvalid, err)
	}
	for _, s := range w.Steps {
		if s.Route.IsBroadcast() {
			return nil, fmt.Errorf("%w: step %q is a broadcast", ErrInvalid, s.Label)
		}
		if err := s.Route.Validate(); err != nil {
			return nil, fmt.Errorf("%w: step %q: %w", ErrInvalid, s.Label, err)
		}
		if w.Registry == nil && s.Route.NeedsRegistry() {
			return nil, fmt.Errorf("%w: step %q routes %s but the workflow has no Registry", ErrInvalid, s.Label, s.Route)
		}
	}
	r := &run{w: w, c: c, id: w.RunID, start: c.Clock().Now(), outputs: map[string][]byte{},
		inbox:        cmp.Or(w.Inbox, runtime.TopicCommands),
		journalTopic: cmp.Or(w.Journal, runtime.TopicWorkflowJournal),
		replies:      cmp.Or(w.ReplyTopic, runtime.TopicResponses)}
	if r.id == (wire.ID{}) {
		r.id = c.IDs().NewID()
	}
	// The last 8 characters of an id: its random part, enough to tell the
	// Run calls of one run id apart.
	nonce := c.IDs().NewID().String()
	r.call = nonce[len(nonce)-8:]
	if err := r.replay(ctx); err != nil {
		return nil, err
	}
	out := &Outcome{RunID: r.id, JournalRefused: r.refused}
	for _, s := range w.Steps {
		if _, ok := r.outputs[s.Label]; ok {
			out.Skipped = append(out.Skipped, s.Label)
		}
	}
	r.journalRun(ctx, OperationRunStarted, r.started())
	if err := r.schedule(ctx); err != nil {
		if ctx.Err() != nil {
			// Stopped, not failed: compensating would undo steps the journal
			// still records as completed, which a resumed run then skips.
			r.journalRun(ctx, OperationRunFinished, r.finished(StatusStopped, ctx.Err()))
			return nil, &StoppedError{RunID: r.id, Err: ctx.Err()}
		}
		status := StatusFailed
		if r.compensate(ctx) > 0 {
			status = StatusCompensated
		}
		r.journalRun(ctx, OperationRunFinished, r.finished(status, err))
		return nil, err
	}
	r.journalRun(ctx, OperationRunFinished, r.finished(StatusCompleted, nil))
	out.Outputs = r.outputs
	return out, nil
}

// started is the record of the run's start: its steps and budget.
func (r *run) started() RunRecord {
	rec := RunRecord{BudgetTokens: r.w.Budget.Tokens, BudgetInvocations: r.w.Budget.Invocations, BudgetWallMicros: uint64(r.w.Budget.WallClock.Microseconds())}
	for _, s := range r.w.Steps {
		rec.Steps = append(rec.Steps, s.Label)
	}
	return rec
}

// finished is the record of the run's end with status and err.
func (r *run) finished(status string, err error) RunRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := RunRecord{Status: status, SpentTokens: r.tokens, SpentInvocations: r.calls, SpentWallMicros: uint64(r.c.Clock().Now().Sub(r.start).Microseconds())}
	if err != nil {
		rec.Error = err.Error()
	}
	return rec
}

type stepResult struct {
	label string
	err   error
}

// schedule dispatches ready steps until all completed or one failed.
func (r *run) schedule(ctx context.Context) error {
	steps := map[string]*Step{}
	for i := range r.w.Steps {
		steps[r.w.Steps[i].Label] = &r.w.Steps[i]
	}
	started := map[string]bool{}
	for l := range r.outputs {
		started[l] = true
	}
	results := make(chan stepResult)
	running := 0
	var firstErr error
	for {
		if firstErr == nil && ctx.Err() != nil {
			firstErr = ctx.Err() // start nothing once the run is stopped
		}
		if firstErr == nil {
			for _, s := range r.w.Steps {
				if started[s.Label] || !r.ready(&s) {
					continue
				}
				if err := r.admit(); err != nil {
					firstErr = err
					break
				}
				started[s.Label] = true
				running++
				input := r.input(steps[s.Label])
				go func(s *Step) {
					results <- stepResult{label: s.Label, err: r.dispatch(ctx, s, input)}
				}(steps[s.Label])
			}
		}
		if running == 0 {
			if firstErr == nil && len(r.outputs) < len(r.w.Steps) {
				firstErr = fmt.Errorf("%w: nothing left to run", ErrInvalid)
			}
			return firstErr
		}
		res := <-results
		running--
		if res.err != nil && firstErr == nil {
			firstErr = res.err
		}
	}
}

func (r *run) ready(s *Step) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range s.After {
		if _, ok := r.outputs[d]; !ok {
			return false
		}
	}
	return true
}

// admit counts an invocation and checks the budget before a dispatch.
func (r *run) admit() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.w.Budget
	if b.WallClock > 0 {
		if left := b.WallClock - r.c.Clock().Now().Sub(r.start); left < MinWallClock {
			return &BudgetExceededError{Ceiling: "wall clock", Limit: uint64(b.WallClock.Milliseconds()), Spent: uint64(r.c.Clock().Now().Sub(r.start).Milliseconds())}
		}
	}
	r.calls++
	if b.Invocations > 0 && r.calls > b.Invocations {
		return &BudgetExceededError{Ceiling: "invocations", Limit: b.Invocations, Spent: r.calls}
	}
	return r.checkTokens()
}

func (r *run) checkTokens() error {
	if b := r.w.Budget; b.Tokens > 0 && r.tokens > b.Tokens {
		return &BudgetExceededError{Ceiling: "tokens", Limit: b.Tokens, Spent: r.tokens}
	}
	return nil
}

func (r *run) input(s *Step) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.Input != nil {
		return s.Input(r.outputs)
	}
	if len(s.After) == 0 {
		return []byte(s.Label)
	}
	var b []byte
	for i, d := range s.After {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, r.outputs[d]...)
	}
	return b
}

// wait is how long one dispatch may take: the remaining wall-clock budget,
// at most MaxStepWait.
func (r *run) wait() time.Duration {
	d := MaxStepWait
	if b := r.w.Budget.WallClock; b > 0 {
		d = min(d, b-r.c.Clock().Now().Sub(r.start))
	}
	return d
}

// dispatch runs one step and journals its output.
func (r *run) dispatch(ctx context.Context, s *Step, input []byte) error {
	output, tokens, err := r.send(ctx, s.Route, input, r.key("step", s.Label))
	r.mu.Lock()
	r.tokens += tokens
	r.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStepFailed, s.Label, err)
	}
	if s.Verify != nil && !s.Verify(output) {
		return fmt.Errorf("%w: %s failed verification", ErrStepFailed, s.Label)
	}
	if err := r.journal(ctx, s.Label, output); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outputs[s.Label] = output
	r.done = append(r.done, s.Label)
	return r.checkTokens()
}

// key is the idempotency key of the step's command (kind "step") or of its
// compensation (kind "undo"): RUNID/KIND/LABEL/CALL, the label hashed when
// the key would exceed the 64-byte limit. Within one Run call every copy of
// a command carries the same key, so a worker drops a redelivered or
// republished copy as a duplicate. A resumed run (another Run call with the
// same run id) dispatches the steps the journal does not record under a new
// CALL, so a step that was in flight when the orchestrator died runs again
// and the resumed run completes it: steps are at-least-once across a crash,
// and a worker makes its effect idempotent by the key's RUNID/KIND/LABEL
// prefix, which every dispatch of the step shares.
func (r *run) key(kind, label string) string {
	k := r.id.String() + "/" + kind + "/" + label + "/" + r.call
	if len(k) <= wire.MaxIdempotencyKeyBytes && utf8.ValidString(k) {
		return k
	}
	sum := sha256.Sum256([]byte(label))
	return r.id.String() + "/" + kind + "/" + hex.EncodeToString(sum[:8]) + "/" + r.call
}

// usage is the tokens a reply reports spending.
func usage(m *runtime.Message) uint64 {
	if m == nil || m.Envelope == nil || m.Envelope.Usage == nil {
		return 0
	}
	return m.Envelope.Usage.InputTokens + m.Envelope.Usage.OutputTokens
}

// send delivers payload along route under idempotency key idem and returns
// the output and the tokens spent, which count even when it fails.
func (r *run) send(ctx context.Context, route registry.Route, payload []byte, idem string) ([]byte, uint64, error) {
	var targets []string
	if r.w.Registry != nil {
		if err := r.w.Registry.Refresh(ctx); err != nil {
			return nil, 0, err
		}
		var err error
		if targets, err = r.w.Registry.Resolve(route); err != nil {
			return nil, 0, err
		}
	} else {
		var err error
		if targets, err = registry.New(r.c.Transport(), registry.Config{}).Resolve(route); err != nil {
			return nil, 0, err
		}
	}
	// The command expires when the wait for it ends, so a worker picking it
	// up later dead-letters it instead of acting for nobody.
	wait := r.wait()
	opts := []runtime.Option{runtime.WithReplyTopic(r.replies), runtime.WithTimeout(wait),
		runtime.WithDeadline(r.c.Clock().Now().Add(wait)), runtime.WithIdempotencyKey(idem), runtime.WithEffectKind(effect.WorkflowStep)}
	if route.IsAll() {
		g, err := fanout.SendTo(ctx, r.c, targets, fanout.Request{Topic: r.inbox, From: r.w.Name, Body: payload}, fanout.RequireAll(), opts...)
		if err != nil {
			return nil, 0, err
		}
		var tokens uint64
		for _, rep := range g.OK {
			tokens += usage(rep.Message)
		}
		// RequireAll: the step completed only if every capable agent did; a
		// partial output would be journaled complete and never retried.
		if len(g.Failures) > 0 || len(g.Cancelled) > 0 || len(g.OK) == 0 {
			var first error
			if len(g.Failures) > 0 {
				first = fmt.Errorf("%s: %w", g.Failures[0].Agent, g.Failures[0].Err)
			}
			return nil, tokens, fmt.Errorf("%d of %d capable agents did not complete (%d failed, %d cancelled): %w",
				len(targets)-len(g.OK), len(targets), len(g.Failures), len(g.Cancelled), cmp.Or(first, ctx.Err(), errIncomplete))
		}
		sort.Slice(g.OK, func(i, j int) bool { return g.OK[i].Agent < g.OK[j].Agent })
		var out []byte
		for i, rep := range g.OK {
			if i > 0 {
				out = append(out, '\n')
			}
			out = append(out, rep.Message.Body()...)
		}
		return out, tokens, nil
	}
	m, err := r.c.Request(ctx, runtime.Out{Topic: r.inbox, From: r.w.Name, Target: targets[0], Body: payload},
		append(opts, runtime.WithConversation(r.id))...)
	if err != nil {
		return nil, usage(m), err
	}
	return m.Body(), usage(m), nil
}

var errIncomplete = errors.New("no reply")

// compensate undoes the steps completed in this run, latest first, and
// returns how many compensations answered.
func (r *run) compensate(ctx context.Context) int {
	undone := 0
	steps := map[string]*Step{}
	for i := range r.w.Steps {
		steps[r.w.Steps[i].Label] = &r.w.Steps[i]
	}
	r.mu.Lock()
	done := append([]string(nil), r.done...)
	r.mu.Unlock()
	for i := len(done) - 1; i >= 0; i-- {
		s := steps[done[i]]
		if s.Compensate == nil {
			continue
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), MaxStepWait)
		_, _, err := r.send(cctx, s.Route, s.Compensate(r.outputs[s.Label]), r.key("undo", s.Label))
		cancel()
		if err == nil {
			undone++
			// The step is undone: so says the journal, or a resumed run
			// would skip a step whose effect is gone.
			if err := r.journalEvent(ctx, OperationStepCompensated, s.Label, nil); err != nil {
				r.c.Logger().Warn("cannot journal a compensation; a resumed run will skip the undone step", "run", r.id.String(), "step", s.Label, "error", err)
			}
		}
	}
	return undone
}
