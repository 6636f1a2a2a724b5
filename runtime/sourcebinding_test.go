package runtime_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// keyed returns a command from source with an idempotency key, conversation
// and, when fence is non-nil, a fence token.
func keyed(source, key string, conversation wire.ConversationID, fence *uint64, body string) *wire.Envelope {
	env := command(body)
	env.Source = wire.AgentID(source)
	env.Conversation = conversation
	k := wire.IdempotencyKey(key)
	env.IdempotencyKey = &k
	if fence != nil {
		env.Metadata.Set(wire.MetaFence, wire.UintValue(*fence))
	}
	return env
}

// signAs signs env with key over the JSON content type it is published with.
func signAs(t *testing.T, key *sign.Key, env *wire.Envelope) *wire.Envelope {
	t.Helper()
	code, av := uint8(wire.ContentJSON), wire.AgentOpVersion
	if err := key.Sign(env, &wire.SignatureContext{ContentType: &code, AgentVersion: &av}); err != nil {
		t.Fatal(err)
	}
	return env
}

// peerRegistry enrolls the real shop and a peer agent, mallory.
func peerRegistry(t *testing.T) (reg *sign.Registry, shop, mallory *sign.Key) {
	t.Helper()
	reg, shop, mallory = sign.NewRegistry(), newKey(21), newKey(22)
	if err := reg.Enroll("shop", shop.Public()); err != nil {
		t.Fatal(err)
	}
	if err := reg.Enroll("mallory", mallory.Public()); err != nil {
		t.Fatal(err)
	}
	return reg, shop, mallory
}

// The reproducer: a peer with its own enrolled key signs as shop;
// its records must be refused, not burn shop's idempotency keys.
func TestVerifierRefusesARecordWhoseSourceIsNotTheSigner(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	reg, shop, mallory := peerRegistry(t)
	sink, dls := deadLetters()
	got := make(chan string, 4)
	start(t, log, runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Verifier: reg,
		Tuning:   runtime.Tuning{DeadLetterSink: sink},
	})
	envelope(t, log, signAs(t, mallory, keyed("shop", "order-42", conv(), nil, "forged")), wire.ContentJSON)
	dl := recv(t, dls, "the forged record's dead letter")
	if dl.Capsule.Reason != wire.ReasonRejected || !errors.Is(dl.Cause, sign.ErrSourceMismatch) {
		t.Fatalf("capsule %+v cause %v, want rejected for its source", dl.Capsule, dl.Cause)
	}
	envelope(t, log, signAs(t, shop, keyed("shop", "order-42", conv(), nil, "real")), wire.ContentJSON)
	if b := recv(t, got, "shop's order-42"); b != "real" {
		t.Fatalf("handled %q", b)
	}
}

func TestAllowSourceLetsAPrincipalSignForAnotherAgent(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	reg, _, mallory := peerRegistry(t)
	if err := reg.AllowSource("mallory", "shop"); err != nil {
		t.Fatal(err)
	}
	got := make(chan *runtime.Message, 1)
	start(t, log, runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(c *runtime.Ctx) error { got <- c.Message(); return nil }),
		Verifier: reg,
	})
	envelope(t, log, signAs(t, mallory, keyed("shop", "order-1", conv(), nil, "relayed")), wire.ContentJSON)
	if m := recv(t, got, "the relayed record"); m.VerifiedPrincipal != "mallory" || m.Provenance.Agent != "shop" {
		t.Fatalf("principal %q agent %q", m.VerifiedPrincipal, m.Provenance.Agent)
	}
	if err := reg.AllowSource("mallory", "bad\x00agent"); err == nil {
		t.Fatal("AllowSource took an agent id with a control character")
	}
}

// Two principals allowed to send as one agent keep separate idempotency
// keys: one cannot burn the other's.
func TestDedupUnderAVerifierIsScopedByThePrincipal(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	reg, shop, mallory := peerRegistry(t)
	if err := reg.AllowSource("mallory", "shop"); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	start(t, log, runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Verifier: reg,
	})
	envelope(t, log, signAs(t, mallory, keyed("shop", "order-42", conv(), nil, "mallory's")), wire.ContentJSON)
	envelope(t, log, signAs(t, shop, keyed("shop", "order-42", conv(), nil, "shop's")), wire.ContentJSON)
	envelope(t, log, signAs(t, shop, keyed("shop", "order-42", conv(), nil, "shop's again")), wire.ContentJSON)
	envelope(t, log, signAs(t, shop, keyed("shop", "order-43", conv(), nil, "last")), wire.ContentJSON)
	for _, want := range []string{"mallory's", "shop's", "last"} {
		if b := recv(t, got, want); b != want {
			t.Fatalf("handled %q, want %q", b, want)
		}
	}
}

// A signer raising the fence of a conversation to the maximum must not
// freeze the real holder's fenced flow there.
func TestFenceUnderAVerifierIsScopedByThePrincipal(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	reg, shop, mallory := peerRegistry(t)
	got := make(chan string, 4)
	start(t, log, runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Verifier: reg,
	})
	c := conv()
	top, one := uint64(math.MaxUint64), uint64(1)
	envelope(t, log, signAs(t, mallory, keyed("mallory", "m-1", c, &top, "fence max")), wire.ContentJSON)
	envelope(t, log, signAs(t, shop, keyed("shop", "s-1", c, &one, "shop fence 1")), wire.ContentJSON)
	for _, want := range []string{"fence max", "shop fence 1"} {
		if b := recv(t, got, want); b != want {
			t.Fatalf("handled %q, want %q", b, want)
		}
	}
}

// Without a verifier, a 256-byte source decodes to no agent; its key
// "shop\x1forder-43" must not be taken for shop's "order-43".
func TestUnknownSendersKeyDoesNotBurnANamedSendersKey(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	got := make(chan string, 4)
	start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
	})
	envelope(t, log, keyed(strings.Repeat("s", 256), "shop\x1forder-43", conv(), nil, "long source"), wire.ContentJSON)
	envelope(t, log, keyed("shop", "order-43", conv(), nil, "shop's"), wire.ContentJSON)
	for _, want := range []string{"long source", "shop's"} {
		if b := recv(t, got, want); b != want {
			t.Fatalf("handled %q, want %q", b, want)
		}
	}
}
