package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/effectgate"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// kindGate records the kind of every effect it is asked about and refuses
// those in refuse.
type kindGate struct {
	mu     sync.Mutex
	kinds  []effect.Kind
	refuse map[effect.Kind]bool
}

var errRefused = errors.New("refused by the test gate")

func (g *kindGate) Admit(_ context.Context, _ *runtime.Client, e *effect.Effect) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.kinds = append(g.kinds, e.Kind)
	if g.refuse[e.Kind] {
		return errRefused
	}
	return nil
}

func (g *kindGate) seen() []effect.Kind {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]effect.Kind(nil), g.kinds...)
}

func gatedClient(t *testing.T, g runtime.EffectGate) (*runtime.Client, runtime.Transport) {
	t.Helper()
	tr := embedlog.New("laser", embedlog.Config{})
	if err := runtime.NewClient(tr, runtime.ClientConfig{}).Bootstrap(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	c := runtime.NewClient(tr, runtime.ClientConfig{EffectGate: g})
	t.Cleanup(func() { _ = c.Close() })
	return c, tr
}

func TestEverySendVerbAsksTheGateWithItsKind(t *testing.T) {
	ctx := t.Context()
	g := &kindGate{refuse: map[effect.Kind]bool{effect.Request: true}}
	c, _ := gatedClient(t, g)
	cmd := runtime.Out{From: "planner", Body: []byte("x")}
	if _, err := c.Send(ctx, cmd); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(ctx, runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "planner", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendPlain(ctx, runtime.TopicCommands, wire.Provenance{Conversation: c.IDs().NewID(), Agent: "planner"}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Publish(ctx, runtime.TopicCommands, runtime.Outgoing{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Request(ctx, cmd); !errors.Is(err, errRefused) {
		t.Fatalf("request: %v, want the gate's refusal", err)
	}
	g.refuse[effect.WorkflowStep] = true
	if _, err := c.Request(ctx, cmd, runtime.WithEffectKind(effect.WorkflowStep)); !errors.Is(err, errRefused) {
		t.Fatalf("workflow step: %v, want the gate's refusal", err)
	}
	want := []effect.Kind{effect.Command, effect.Event, effect.Plain, effect.Publish, effect.Request, effect.WorkflowStep}
	if got := g.seen(); !equalKinds(got, want) {
		t.Fatalf("the gate saw %v, want %v", got, want)
	}
}

func equalKinds(a, b []effect.Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestARefusedEffectPublishesNothing(t *testing.T) {
	ctx := t.Context()
	g := &kindGate{refuse: map[effect.Kind]bool{effect.Event: true, effect.Publish: true}}
	c, tr := gatedClient(t, g)
	if _, err := c.Send(ctx, runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "planner", Body: []byte("x")}); !errors.Is(err, errRefused) {
		t.Fatalf("emit: %v, want the gate's refusal", err)
	}
	rec := runtime.Outgoing{Payload: []byte("x")}
	if _, err := c.Publish(ctx, runtime.TopicCommands, rec, rec); !errors.Is(err, errRefused) {
		t.Fatalf("publish: %v, want the gate's refusal", err)
	}
	if end, err := tr.NextOffset(ctx, runtime.TopicCommands, 0); err != nil || end != 0 {
		t.Fatalf("agent.commands holds %d records (%v), want none", end, err)
	}
}

func TestTheGatesOwnContextSkipsTheGate(t *testing.T) {
	g := &kindGate{refuse: map[effect.Kind]bool{effect.Event: true}}
	c, _ := gatedClient(t, g)
	if _, err := c.Send(effectgate.Without(t.Context()), runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "planner", Body: []byte("x")}); err != nil {
		t.Fatalf("emit without the gate: %v", err)
	}
	if got := g.seen(); len(got) != 0 {
		t.Fatalf("the gate saw %v, want nothing", got)
	}
}

func TestGovernAsksTheGateAboutTheCallersOwnEffect(t *testing.T) {
	g := &kindGate{refuse: map[effect.Kind]bool{effect.BridgeCall: true}}
	c, _ := gatedClient(t, g)
	err := c.Govern(t.Context(), &effect.Effect{Kind: effect.BridgeCall, Topic: "mcp:payments"})
	if !errors.Is(err, errRefused) {
		t.Fatalf("govern: %v, want the gate's refusal", err)
	}
}

// replacing is a gate that replaces every body.
type replacing struct{}

func (replacing) Admit(_ context.Context, _ *runtime.Client, e *effect.Effect) error {
	e.Body = []byte("replaced")
	return nil
}

func TestAGateReplacesTheBodyThatIsPublished(t *testing.T) {
	ctx := t.Context()
	c, tr := gatedClient(t, replacing{})
	if _, err := c.Send(ctx, runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "planner", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Publish(ctx, runtime.TopicCommands, runtime.Outgoing{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	recs, err := tr.ReadRange(ctx, runtime.TopicCommands, 0, 0, 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("read %d records (%v), want 2", len(recs), err)
	}
	m, err := runtime.DecodeRecord(runtime.TopicCommands, &recs[0], 0)
	if err != nil || string(m.Body()) != "replaced" || string(recs[1].Payload) != "replaced" {
		t.Fatalf("bodies %q and %q (%v), want both replaced", m.Body(), recs[1].Payload, err)
	}
}

func TestDeadLettersAreNotGoverned(t *testing.T) {
	g := &kindGate{refuse: map[effect.Kind]bool{effect.Publish: true, effect.Status: true}}
	c, _ := gatedClient(t, g)
	ctx := t.Context()
	parked := make(chan runtime.DeadLetter, 1)
	a, err := c.NewAgent(runtime.AgentConfig{ID: "worker", Listen: runtime.TopicCommands,
		Tuning:  runtime.Tuning{DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) { parked <- dl }},
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error { return runtime.Reject(fmt.Errorf("poison")) })})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(ctx)
	t.Cleanup(func() { _ = h.Stop() })
	if _, err := c.Send(ctx, runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "planner", Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if dl := <-parked; dl.PublishErr != nil {
		t.Fatalf("the dead letter was not published: %v", dl.PublishErr)
	}
}
