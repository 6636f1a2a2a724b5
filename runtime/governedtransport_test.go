package runtime_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// blockAll refuses every effect, as an enforcing gate whose policy blocks
// everything does.
type blockAll struct{}

func (blockAll) Admit(context.Context, *runtime.Client, *effect.Effect) error { return errRefused }

const leakTopic = "agent.leak"

// leak is one record a handler tries to get onto the log around its gate.
func leak(body string) runtime.Outgoing {
	return runtime.Outgoing{Payload: []byte(body)}
}

// TestAHandlersClientIsGovernedAllTheWayDown runs a handler under an
// agent gate that blocks everything and tries every way down from its
// Ctx to the log: the client's transport, and a new client or consumer
// client built on that transport. Each is refused by the gate and nothing
// reaches the topic.
func TestAHandlersClientIsGovernedAllTheWayDown(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	if err := log.EnsureTopics(t.Context(), 1, leakTopic); err != nil {
		t.Fatal(err)
	}
	ways := []struct {
		name    string
		publish func(hc *runtime.Ctx) error
	}{
		{"the client's transport", func(hc *runtime.Ctx) error {
			_, err := hc.Client().Transport().Publish(hc, leakTopic, leak("transport"))
			return err
		}},
		{"a new client's producer on that transport", func(hc *runtime.Ctx) error {
			c := runtime.NewClient(hc.Client().Transport(), runtime.ClientConfig{Logger: quietLogger()})
			_, err := c.Publish(hc, leakTopic, leak("new client producer"))
			return err
		}},
		{"a new client's transport", func(hc *runtime.Ctx) error {
			c := runtime.NewClient(hc.Client().Transport(), runtime.ClientConfig{Logger: quietLogger()})
			_, err := c.Transport().Publish(hc, leakTopic, leak("new client transport"))
			return err
		}},
		{"a new client's send verb", func(hc *runtime.Ctx) error {
			c := runtime.NewClient(hc.Client().Transport(), runtime.ClientConfig{Logger: quietLogger()})
			_, err := c.SendPlain(hc, leakTopic, wire.Provenance{Agent: agent}, []byte("new client send"))
			return err
		}},
	}
	results := make(chan error, len(ways))
	r := start(t, log, runtime.ConsumerConfig{
		Agent:      agent,
		EffectGate: blockAll{},
		Handler: handlerFunc(func(hc *runtime.Ctx) error {
			for _, w := range ways {
				results <- w.publish(hc)
			}
			return nil
		}),
	})
	plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender}, "go")
	for _, w := range ways {
		if err := recv(t, results, w.name); !errors.Is(err, errRefused) {
			t.Errorf("%s: publish returned %v, want the gate's refusal", w.name, err)
		}
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, log, leakTopic); len(got) != 0 {
		t.Fatalf("%d records reached %s around a gate that blocks everything: %q", len(got), leakTopic, got[0].Payload)
	}
}

// TestAClientsTransportIsGovernedByItsGate checks the client-level gate on
// a publish straight through the client's transport.
func TestAClientsTransportIsGovernedByItsGate(t *testing.T) {
	c, tr := gatedClient(t, blockAll{})
	if err := tr.EnsureTopics(t.Context(), 1, leakTopic); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transport().Publish(t.Context(), leakTopic, leak("raw")); !errors.Is(err, errRefused) {
		t.Fatalf("publish through a gated client's transport returned %v, want the gate's refusal", err)
	}
	if got := readAll(t, tr, leakTopic); len(got) != 0 {
		t.Fatalf("%d records reached %s around the client's gate", len(got), leakTopic)
	}
}

// TestAnUngatedClientsTransportPublishesAsItIs checks that the governed
// transport changes nothing when no gate governs: the records go as they
// are.
func TestAnUngatedClientsTransportPublishesAsItIs(t *testing.T) {
	c, tr := gatedClient(t, nil)
	if err := tr.EnsureTopics(t.Context(), 1, leakTopic); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transport().Publish(t.Context(), leakTopic, leak("raw")); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, tr, leakTopic); len(got) != 1 || string(got[0].Payload) != "raw" {
		t.Fatalf("read %d records back, want the one published as it was", len(got))
	}
}

// allowAll admits every effect: a gate a handler might bring to lift its
// agent's.
type allowAll struct{}

func (allowAll) Admit(context.Context, *runtime.Client, *effect.Effect) error { return nil }

// publishAround runs one handler that tries publish under a gate blocking
// everything (the agent's when agentGate, else its client's) and fails
// the test when anything reached leakTopic.
func publishAround(t *testing.T, agentGate bool, publish func(hc *runtime.Ctx) error) {
	t.Helper()
	log := newLog(t, 1, clock.System{})
	if err := log.EnsureTopics(t.Context(), 1, leakTopic); err != nil {
		t.Fatal(err)
	}
	results := make(chan error, 1)
	cfg := runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(hc *runtime.Ctx) error {
			results <- publish(hc)
			return nil
		}),
	}
	if agentGate {
		cfg.EffectGate = blockAll{}
	} else {
		cfg.Client = runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger(), EffectGate: blockAll{}})
	}
	r := start(t, log, cfg)
	plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender}, "go")
	err := recv(t, results, "the handler's publish")
	_ = r.shutdown(t)
	if got := len(readAll(t, log, leakTopic)); got > 0 {
		t.Fatalf("%d records published around a gate that blocks everything (err=%v)", got, err)
	}
	if !errors.Is(err, errRefused) {
		t.Fatalf("publish = %v, want the gate's refusal", err)
	}
}

// TestAHandlerCannotPublishAroundTheGateWithANewClientsOwnGate builds a
// client over the handler's transport with a gate of its own that admits
// everything: the parent client's gate still decides.
func TestAHandlerCannotPublishAroundTheGateWithANewClientsOwnGate(t *testing.T) {
	publishAround(t, false, func(hc *runtime.Ctx) error {
		c := runtime.NewClient(hc.Client().Transport(), runtime.ClientConfig{Logger: quietLogger(), EffectGate: allowAll{}})
		_, err := c.Publish(hc, leakTopic, leak("own-gate"))
		return err
	})
}

// TestAHandlerCannotPublishAroundTheAgentGateWithANewClientsOwnGate is the
// same under an agent gate, publishing under a context not derived from
// the handler's Ctx.
func TestAHandlerCannotPublishAroundTheAgentGateWithANewClientsOwnGate(t *testing.T) {
	publishAround(t, true, func(hc *runtime.Ctx) error {
		c := runtime.NewClient(hc.Client().Transport(), runtime.ClientConfig{Logger: quietLogger(), EffectGate: allowAll{}})
		_, err := c.Publish(context.Background(), leakTopic, leak("own-gate-bg"))
		return err
	})
}

// TestAHandlerCannotPublishAroundTheAgentGateThroughTransportUnderAnotherContext
// publishes through the handler's transport under context.Background():
// the agent's gate governs it, not the context.
func TestAHandlerCannotPublishAroundTheAgentGateThroughTransportUnderAnotherContext(t *testing.T) {
	publishAround(t, true, func(hc *runtime.Ctx) error {
		_, err := hc.Client().Transport().Publish(context.Background(), leakTopic, leak("bg-transport"))
		return err
	})
}

// TestAHandlerCannotPublishAroundTheAgentGateThroughProducerUnderAnotherContext
// publishes through the handler's producer under context.Background().
func TestAHandlerCannotPublishAroundTheAgentGateThroughProducerUnderAnotherContext(t *testing.T) {
	publishAround(t, true, func(hc *runtime.Ctx) error {
		_, err := hc.Client().Publish(context.Background(), leakTopic, leak("bg-producer"))
		return err
	})
}

// TestAHandlerCannotReachTheRawTransportByReflection finds no exported
// field on the governed transport that holds the one underneath.
func TestAHandlerCannotReachTheRawTransportByReflection(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	c := runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger(), EffectGate: blockAll{}})
	v := reflect.ValueOf(c.Transport())
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() {
			t.Errorf("the governed transport exports field %s (%s)", f.Name, f.Type)
		}
	}
}
