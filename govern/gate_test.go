package govern_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/fanout"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func TestBlockPublishesNothingAndReturnsErrBlocked(t *testing.T) {
	w := governed(t, fixed(govern.Block("no wires").WithPolicy("payments", "v3")), govern.Config{})
	_, err := w.emit()
	if !errors.Is(err, govern.ErrBlocked) {
		t.Fatalf("emit: %v, want ErrBlocked", err)
	}
	if runtime.IsRetryable(err) {
		t.Fatalf("a block is retryable: %v", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
	ev := w.onlyEvidence()
	if ev.Verdict != govern.VerdictBlock || ev.Outcome != govern.OutcomeBlocked || ev.Mode != govern.Enforce ||
		ev.PolicyID != "payments" || ev.PolicyVersion != "v3" || ev.Reason != "no wires" {
		t.Fatalf("evidence %+v, want block/blocked under payments v3 with the reason", ev)
	}
	if ev.Action.Kind != "event" || ev.Action.Agent != "planner" || ev.Action.Topic != runtime.TopicCommands || ev.Action.BodySize != len("wire-funds") {
		t.Fatalf("evidence action %+v, want planner's event on agent.commands of 10 bytes", ev.Action)
	}
}

func TestAllowRunsTheEffectAndRecordsNothingUnlessAsked(t *testing.T) {
	for _, all := range []bool{false, true} {
		w := governed(t, fixed(govern.Allow()), govern.Config{RecordAllows: all})
		if _, err := w.emit(); err != nil {
			t.Fatal(err)
		}
		if got := w.messages(runtime.TopicCommands); len(got) != 1 {
			t.Fatalf("%d messages published, want 1", len(got))
		}
		evs := w.evidence()
		switch {
		case !all && len(evs) != 0:
			t.Fatalf("an allow recorded %d decisions, want none", len(evs))
		case all && (len(evs) != 1 || evs[0].Verdict != govern.VerdictAllow || evs[0].Outcome != govern.OutcomeEffected):
			t.Fatalf("with RecordAllows: %+v, want one allow/effected", evs)
		}
	}
}

func TestModifyPublishesTheReplacementAndRecordsIt(t *testing.T) {
	w := governed(t, fixed(govern.Modify([]byte("wire-funds [redacted]"), "redact")), govern.Config{})
	if _, err := w.emit(); err != nil {
		t.Fatal(err)
	}
	got := w.messages(runtime.TopicCommands)
	if len(got) != 1 || string(got[0].Body()) != "wire-funds [redacted]" {
		t.Fatalf("published %d messages, want the replacement body", len(got))
	}
	if ev := w.onlyEvidence(); ev.Verdict != govern.VerdictModify || ev.Outcome != govern.OutcomeModified {
		t.Fatalf("evidence %+v, want modify/modified", ev)
	}
}

func TestModifyReplacesMetadata(t *testing.T) {
	var md wire.Metadata
	md.Set(wire.MetaDataClassification, wire.StrValue("restricted"))
	d := govern.Decision{Verdict: govern.VerdictModify, Metadata: md}
	w := governed(t, fixed(d), govern.Config{})
	if _, err := w.emit(runtime.WithMetadata(wire.MetaDataClassification, wire.StrValue("public"))); err != nil {
		t.Fatal(err)
	}
	got := w.messages(runtime.TopicCommands)
	if len(got) != 1 {
		t.Fatalf("published %d messages, want 1", len(got))
	}
	if v, _ := got[0].Envelope.Metadata.Get(wire.MetaDataClassification).AsStr(); v != "restricted" || string(got[0].Body()) != "wire-funds" {
		t.Fatalf("classification %q body %q, want the replaced metadata and the body unchanged", v, got[0].Body())
	}
}

func TestDeferIsARetryableErrorAndPublishesNothing(t *testing.T) {
	w := governed(t, fixed(govern.Defer("outside business hours")), govern.Config{})
	_, err := w.emit()
	if !errors.Is(err, govern.ErrDeferred) || !runtime.IsRetryable(err) {
		t.Fatalf("emit: %v, want a retryable ErrDeferred", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
	if ev := w.onlyEvidence(); ev.Verdict != govern.VerdictDefer || ev.Outcome != govern.OutcomeDeferred {
		t.Fatalf("evidence %+v, want defer/deferred", ev)
	}
}

func TestAGovernorErrorFailsClosedInEitherMode(t *testing.T) {
	broken := govern.GovernorFunc(func(context.Context, *govern.Action) (govern.Decision, error) {
		return govern.Decision{}, errors.New("policy engine down")
	})
	for _, mode := range []govern.Mode{govern.Enforce, govern.Observe} {
		w := governed(t, broken, govern.Config{Mode: mode})
		_, err := w.emit()
		if !errors.Is(err, govern.ErrBlocked) {
			t.Fatalf("emit under a failing governor in %s mode: %v, want ErrBlocked", mode, err)
		}
		if got := w.messages(runtime.TopicCommands); len(got) != 0 {
			t.Fatalf("%s mode: %d messages published, want none", mode, len(got))
		}
		if ev := w.onlyEvidence(); ev.Verdict != govern.VerdictError || ev.Outcome != govern.OutcomeBlocked || ev.Mode != mode {
			t.Fatalf("evidence %+v, want error/blocked in %s mode", ev, mode)
		}
	}
}

func TestAnUnknownVerdictFailsClosed(t *testing.T) {
	w := governed(t, fixed(govern.Decision{Verdict: "maybe"}), govern.Config{})
	if _, err := w.emit(); !errors.Is(err, govern.ErrBlocked) {
		t.Fatalf("emit: %v, want ErrBlocked", err)
	}
}

func TestObserveModeRecordsWhatEnforceWouldDoAndLetsTheEffectThrough(t *testing.T) {
	for _, d := range []govern.Decision{govern.Block("no"), govern.Defer("later"), govern.Modify([]byte("other"), ""), govern.StepUp("payments", "")} {
		w := governed(t, fixed(d), govern.Config{Mode: govern.Observe})
		if _, err := w.emit(); err != nil {
			t.Fatalf("%s in observe mode: %v, want the effect through", d.Verdict, err)
		}
		got := w.messages(runtime.TopicCommands)
		if len(got) != 1 || string(got[0].Body()) != "wire-funds" {
			t.Fatalf("%s in observe mode published %d messages, want the original one", d.Verdict, len(got))
		}
		if ev := w.onlyEvidence(); ev.Verdict != d.Verdict || ev.Outcome != govern.OutcomeEffected || ev.Mode != govern.Observe {
			t.Fatalf("evidence %+v, want %s/effected in observe mode", ev, d.Verdict)
		}
	}
}

func TestTheGovernorSeesTheAction(t *testing.T) {
	var seen govern.Action
	gov := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		seen = *a
		return govern.Allow(), nil
	})
	w := governed(t, gov, govern.Config{})
	_, err := w.c.Send(w.ctx, runtime.Out{From: "planner", Target: "payer", Body: []byte("wire-funds")},
		runtime.WithOperation("wire"), runtime.WithMetadata(wire.MetaPurpose, wire.StrValue("payroll")),
		runtime.WithMetadata(wire.MetaDataClassification, wire.StrValue("pii")))
	if err != nil {
		t.Fatal(err)
	}
	if seen.Kind != effect.Command || seen.Topic != runtime.TopicCommands || seen.Operation != "wire" ||
		seen.Agent != "planner" || seen.Target != "payer" || seen.Conversation.IsZero() || string(seen.Body) != "wire-funds" ||
		seen.Signed || seen.Claims.Purpose != "payroll" || seen.Claims.DataClassification != "pii" {
		t.Fatalf("action %+v, want planner's wire command to payer with its claims", seen)
	}
}

func TestRawPublishesAreGoverned(t *testing.T) {
	w := governed(t, fixed(govern.Block("raw")), govern.Config{})
	_, err := w.c.Publish(w.ctx, "agent.commands", runtime.Outgoing{Payload: []byte("wire-funds")})
	if !errors.Is(err, govern.ErrBlocked) {
		t.Fatalf("raw publish: %v, want ErrBlocked", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d records published, want none", len(got))
	}
	if ev := w.onlyEvidence(); ev.Action.Kind != string(effect.Publish) {
		t.Fatalf("evidence of kind %q, want publish", ev.Action.Kind)
	}
}

func TestAFailedEvidenceWriteFailsAProceedingEffect(t *testing.T) {
	// The audit topic does not exist, so no decision can be recorded: an
	// effect whose decision is unrecorded must not run.
	w := governed(t, fixed(govern.Modify([]byte("x"), "")), govern.Config{AuditTopic: "missing.audit"})
	if _, err := w.emit(); err == nil {
		t.Fatal("a modified effect ran without its evidence")
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
}

func TestMemoryWritesAreGoverned(t *testing.T) {
	w := governed(t, fixed(govern.Block("no memory")), govern.Config{})
	mem := memory.New(w.c, memory.Config{Topic: "agent.memory"})
	if err := w.tr.EnsureTopics(w.ctx, 1, "agent.memory"); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Remember(w.ctx, memory.Scope{Agent: "planner"}, memory.Fact, []byte("the vault code")); !errors.Is(err, govern.ErrBlocked) {
		t.Fatalf("remember: %v, want ErrBlocked", err)
	}
	if got := w.messages("agent.memory"); len(got) != 0 {
		t.Fatalf("%d memory records written, want none", len(got))
	}
	ev := w.onlyEvidence()
	if ev.Action.Kind != string(effect.MemoryWrite) || ev.Action.Agent != "planner" || ev.Action.Operation == "" {
		t.Fatalf("evidence action %+v, want planner's memory write with its operation", ev.Action)
	}
}

func TestEachFanOutBranchIsGoverned(t *testing.T) {
	var mu sync.Mutex
	var targets []string
	gov := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		if a.Kind != effect.FanoutBranch {
			return govern.Allow(), nil
		}
		mu.Lock()
		targets = append(targets, a.Target)
		mu.Unlock()
		return govern.Block("no fan-out"), nil
	})
	w := governed(t, gov, govern.Config{})
	g, err := fanout.SendTo(w.ctx, w.c, []string{"ann", "bob"}, fanout.Request{Topic: runtime.TopicCommands, From: "planner", Body: []byte("x")}, fanout.RequireAll())
	if err == nil && len(g.OK) > 0 {
		t.Fatalf("fan-out answered %d branches, want every branch blocked", len(g.OK))
	}
	slices.Sort(targets)
	if !slices.Equal(targets, []string{"ann", "bob"}) {
		t.Fatalf("the governor saw branches to %v, want ann and bob", targets)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d commands published, want none", len(got))
	}
}

func TestAHandlersDeclaredClassesReachTheGovernor(t *testing.T) {
	seen := make(chan effect.Claims, 1)
	gov := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		if a.Agent == "payer" {
			seen <- a.Claims
		}
		return govern.Allow(), nil
	})
	w := governed(t, gov, govern.Config{})
	if err := w.tr.EnsureTopics(w.ctx, 1, "agent.inbox"); err != nil {
		t.Fatal(err)
	}
	w.start(runtime.AgentConfig{ID: "payer", Listen: "agent.inbox", Claims: effect.Claims{DataClassification: "internal"},
		Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
			// What lasergen's dispatch does for //laser:handle effect=payment.
			hc = hc.WithClaims(effect.Claims{EffectClass: "payment"})
			_, err := hc.Send(runtime.TopicCommands, "bank", []byte("wire-funds"))
			return err
		})})
	if _, err := w.c.Send(w.ctx, runtime.Out{Kind: wire.KindEvent, Topic: "agent.inbox", From: "planner", Body: []byte("go")}); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got.EffectClass != "payment" || got.DataClassification != "internal" {
		t.Fatalf("claims %+v, want the handler's effect class and the agent's data classification", got)
	}
}

func TestAPlainAnswerIsSeenAsAResponse(t *testing.T) {
	kinds := make(chan effect.Kind, 1)
	gov := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		if a.Agent == "payer" {
			kinds <- a.Kind
		}
		return govern.Allow(), nil
	})
	w := governed(t, gov, govern.Config{})
	if err := w.tr.EnsureTopics(w.ctx, 1, "agent.inbox"); err != nil {
		t.Fatal(err)
	}
	w.start(runtime.AgentConfig{ID: "payer", Listen: "agent.inbox", Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error { return hc.Respond([]byte("done")) })})
	if _, err := w.c.Send(w.ctx, runtime.Out{Kind: wire.KindEvent, Topic: "agent.inbox", From: "planner", Body: []byte("go")}); err != nil {
		t.Fatal(err)
	}
	if got := <-kinds; got != effect.Response {
		t.Fatalf("the answer was seen as %q, want response", got)
	}
}

func TestTheGatesOwnEvidenceIsNotGoverned(t *testing.T) {
	var mu sync.Mutex
	var topics []string
	gov := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		topics = append(topics, a.Topic)
		return govern.Block("nothing leaves"), nil
	})
	w := governed(t, gov, govern.Config{})
	if _, err := w.emit(); !errors.Is(err, govern.ErrBlocked) {
		t.Fatalf("emit: %v, want ErrBlocked", err)
	}
	if ev := w.onlyEvidence(); ev.Outcome != govern.OutcomeBlocked {
		t.Fatalf("evidence %+v, want the block recorded despite a policy blocking every publish", ev)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(topics, []string{runtime.TopicCommands}) {
		t.Fatalf("the governor was asked about %v, want only the emit, never its own evidence", topics)
	}
}

func TestAnAdmittedEffectThatFailsToPublishIsRecordedFailed(t *testing.T) {
	w := governed(t, fixed(govern.Allow()), govern.Config{RecordAllows: true})
	if _, err := w.c.Send(w.ctx, runtime.Out{Kind: wire.KindEvent, Topic: "agent.nowhere", From: "planner", Body: []byte("wire-funds")}); err == nil {
		t.Fatal("an emit to a topic that does not exist succeeded")
	}
	evs := w.evidence()
	if len(evs) != 2 || evs[0].Outcome != govern.OutcomeEffected || evs[1].Outcome != govern.OutcomeFailed || evs[1].Action.Topic != "agent.nowhere" {
		t.Fatalf("evidence %+v, want effected then failed for agent.nowhere", evs)
	}
	if _, err := w.emit(); err != nil {
		t.Fatal(err)
	}
	if evs := w.evidence(); len(evs) != 3 || evs[2].Outcome != govern.OutcomeEffected {
		t.Fatalf("evidence %+v, want a published effect recorded effected alone", evs)
	}
}

func TestAModifyGivingMetadataToARecordWithoutAnEnvelopeFailsClosed(t *testing.T) {
	var md wire.Metadata
	md.Set(wire.MetaPurpose, wire.StrValue("audit"))
	d := govern.Modify([]byte("redacted"), "redact")
	d.Metadata = md
	w := governed(t, fixed(d), govern.Config{})
	sends := map[string]func() error{
		"publish": func() error {
			_, err := w.c.Publish(w.ctx, runtime.TopicCommands, runtime.Outgoing{Payload: []byte("wire-funds")})
			return err
		},
		"plain": func() error {
			_, err := w.c.SendPlain(w.ctx, runtime.TopicCommands, wire.Provenance{Agent: "planner", Conversation: w.c.IDs().NewID()}, []byte("wire-funds"))
			return err
		},
	}
	for name, send := range sends {
		var rerr *runtime.Error
		if err := send(); !errors.As(err, &rerr) || rerr.Code != runtime.CodeInvalid {
			t.Fatalf("%s with metadata modified in: %v, want a CodeInvalid error", name, err)
		}
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
	evs := w.evidence()
	if len(evs) != 4 || evs[1].Outcome != govern.OutcomeFailed || evs[3].Outcome != govern.OutcomeFailed {
		t.Fatalf("evidence %+v, want each modify followed by its failure", evs)
	}
}

func TestAHandlerDeferredOnceIsRetriedAndItsEffectPublished(t *testing.T) {
	var mu sync.Mutex
	asked := 0
	gov := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		if a.Topic != runtime.TopicCommands {
			return govern.Allow(), nil
		}
		mu.Lock()
		defer mu.Unlock()
		if asked++; asked == 1 {
			return govern.Defer("not yet"), nil
		}
		return govern.Allow(), nil
	})
	w := governed(t, fixed(govern.Allow()), govern.Config{})
	if err := w.tr.EnsureTopics(w.ctx, 1, "agent.inbox"); err != nil {
		t.Fatal(err)
	}
	attempts, sent := make(chan int, 2), make(chan error, 2)
	gate := govern.NewGate(gov, govern.Config{})
	w.start(runtime.AgentConfig{ID: "payer", Listen: "agent.inbox", EffectGate: gate,
		Tuning: runtime.Tuning{Retry: runtime.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond}},
		Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
			attempts <- hc.Attempt()
			_, err := hc.Send(runtime.TopicCommands, "bank", []byte("wire-funds"))
			sent <- err
			return err
		})})
	if _, err := w.c.Send(w.ctx, runtime.Out{Kind: wire.KindEvent, Topic: "agent.inbox", From: "planner", Body: []byte("go")}); err != nil {
		t.Fatal(err)
	}
	if first, err := <-attempts, <-sent; first != 1 || !errors.Is(err, govern.ErrDeferred) {
		t.Fatalf("attempt %d sent: %v, want attempt 1 deferred", first, err)
	}
	if second, err := <-attempts, <-sent; second != 2 || err != nil {
		t.Fatalf("attempt %d sent: %v, want attempt 2 allowed", second, err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 1 {
		t.Fatalf("%d commands published, want the retried one", len(got))
	}
	ev := w.evidence()
	if len(ev) != 1 || ev[0].Outcome != govern.OutcomeDeferred {
		t.Fatalf("evidence %+v, want the one deferral", ev)
	}
}
