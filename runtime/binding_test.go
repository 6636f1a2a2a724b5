package runtime_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// boundCommand is shop's signed command bound to dst, issued at iat.
func boundCommand(t *testing.T, key *sign.Key, dst string, iat time.Time, body string) *wire.Envelope {
	t.Helper()
	env := keyed("shop", body, conv(), nil, body)
	sign.Bind(env, dst, uint64(iat.UnixMicro()))
	return signAs(t, key, env)
}

// refusedFor runs a verifying consumer over log, publishes env and reports
// the cause its dead letter names.
func refusedFor(t *testing.T, log runtime.Transport, reg *sign.Registry, env *wire.Envelope) error {
	t.Helper()
	sink, dls := deadLetters()
	start(t, log, runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(*runtime.Ctx) error { return nil }),
		Verifier: reg,
		Tuning:   runtime.Tuning{DeadLetterSink: sink},
	})
	envelope(t, log, env, wire.ContentJSON)
	return recv(t, dls, "the refusal").Cause
}

func TestSignedRecordCopiedToAnotherTopicIsRefused(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	reg, shop, _ := peerRegistry(t)
	cause := refusedFor(t, log, reg, boundCommand(t, shop, "agent.payments", epoch, "order-1"))
	if !errors.Is(cause, sign.ErrWrongTopic) {
		t.Fatalf("cause %v, want ErrWrongTopic", cause)
	}
}

func TestSignedRecordOlderThanTheFreshnessBoundIsRefused(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	reg, shop, _ := peerRegistry(t)
	cause := refusedFor(t, log, reg, boundCommand(t, shop, topic, epoch.Add(-sign.DefaultMaxAge-time.Second), "order-1"))
	if !errors.Is(cause, sign.ErrStale) {
		t.Fatalf("cause %v, want ErrStale", cause)
	}
}

func TestRequiredBindingRefusesAnUnboundSignature(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	reg, shop, _ := peerRegistry(t)
	sink, dls := deadLetters()
	start(t, log, runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(*runtime.Ctx) error { return nil }),
		Verifier: reg,
		Tuning:   runtime.Tuning{DeadLetterSink: sink, Binding: sign.BindingPolicy{Require: true}},
	})
	envelope(t, log, signAs(t, shop, keyed("shop", "k", conv(), nil, "unbound")), wire.ContentJSON)
	if cause := recv(t, dls, "the refusal").Cause; !errors.Is(cause, sign.ErrUnbound) {
		t.Fatalf("cause %v, want ErrUnbound", cause)
	}
}

// The client's signing path binds the topic and the issued-at, so what it
// sends verifies where it was sent.
func TestClientSignedSendCarriesTopicAndIssuedAt(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	reg, shop, _ := peerRegistry(t)
	got := make(chan *runtime.Message, 1)
	start(t, log, runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(c *runtime.Ctx) error { got <- c.Message(); return nil }),
		Verifier: reg,
		Tuning:   runtime.Tuning{Binding: sign.BindingPolicy{Require: true}},
	})
	client := runtime.NewClient(log, runtime.ClientConfig{Clock: clock, Logger: quietLogger()})
	if _, err := client.Send(t.Context(), runtime.Out{Kind: wire.KindStatus, Topic: topic, From: "shop", Body: []byte("hi")}, runtime.WithOperation(wire.OperationProgress), runtime.WithSigningKey(shop)); err != nil {
		t.Fatal(err)
	}
	m := recv(t, got, "the signed send")
	if dst, _ := m.Envelope.Metadata.Get(sign.MetaTopic).AsStr(); dst != topic {
		t.Fatalf("signed topic %q", dst)
	}
	if iat, _ := sign.IssuedAt(m.Envelope); iat != uint64(epoch.UnixMicro()) {
		t.Fatalf("issued at %d", iat)
	}
}

// A consumer that restarts (a new process: a new Consumer on the same
// group) must still refuse a replay of a signed record it handled before.
func TestSignedReplayAfterARestartIsDropped(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	reg, shop, _ := peerRegistry(t)
	got := make(chan string, 4)
	cfg := runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Verifier: reg,
	}
	first := start(t, log, cfg)
	env := boundCommand(t, shop, topic, time.Now(), "once")
	envelope(t, log, env, wire.ContentJSON)
	if b := recv(t, got, "the original"); b != "once" {
		t.Fatal(b)
	}
	if err := first.shutdown(t); err != nil {
		t.Fatal(err)
	}
	start(t, log, cfg)
	envelope(t, log, env, wire.ContentJSON) // the same signed bytes, after the restart
	envelope(t, log, boundCommand(t, shop, topic, time.Now(), "next"), wire.ContentJSON)
	if b := recv(t, got, "the next record"); b != "next" {
		t.Fatalf("the replay was handled after a restart: %q", b)
	}
}
