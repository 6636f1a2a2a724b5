package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/deadletter"
	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// parkSigned runs a consumer that signs with key and refuses every message,
// publishes one plain message and returns the capsule record.
func parkSigned(t *testing.T, log runtime.Transport, key *sign.Key) runtime.Incoming {
	t.Helper()
	sink, dls := deadLetters()
	start(t, log, runtime.ConsumerConfig{
		Agent:      agent,
		Handler:    handlerFunc(func(*runtime.Ctx) error { return runtime.Reject(errors.New("no")) }),
		SigningKey: key,
		Tuning:     runtime.Tuning{DeadLetterSink: sink},
	})
	plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, IdempotencyKey: "pay-1"}, "pay 10")
	dl := recv(t, dls, "the dead letter")
	recs, err := log.ReadRange(t.Context(), dlq, dl.Position.Partition, dl.Position.Offset, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("capsule record: %v, %d", err, len(recs))
	}
	return recs[0]
}

func TestDeadLetterCapsulesAreSignedByTheConsumersKey(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	worker, mallory := newKey(31), newKey(32)
	reg := sign.NewRegistry()
	_ = reg.Enroll(agent, worker.Public())
	_ = reg.Enroll("mallory", mallory.Public())
	rec := parkSigned(t, log, worker)
	v, capsule, err := deadletter.Verify(reg, dlq, &rec)
	if err != nil || v.Principal != agent || string(capsule.Payload) != "pay 10" {
		t.Fatalf("verify: %v principal %q capsule %+v", err, v.Principal, capsule)
	}
	// The same capsule read as if from another dead-letter topic fails.
	if _, _, err := deadletter.Verify(reg, "other.dlq", &rec); !errors.Is(err, sign.ErrBadSignature) {
		t.Fatalf("capsule checked against another topic: %v", err)
	}
}

// Forged capsules: unsigned, tampered, or signed by a peer naming the
// consumer; none verifies.
func TestForgedDeadLetterCapsulesDoNotVerify(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	worker, mallory := newKey(31), newKey(32)
	reg := sign.NewRegistry()
	_ = reg.Enroll(agent, worker.Public())
	_ = reg.Enroll("mallory", mallory.Public())
	rec := parkSigned(t, log, worker)

	unsigned := rec
	without := rec.Headers.Decode()
	without.Del(runtime.HeaderDeadLetterSignature)
	unsigned.Headers = wire.MustEncodeHeaders(without)
	if _, _, err := deadletter.Verify(reg, dlq, &unsigned); !errors.Is(err, sign.ErrUnsigned) {
		t.Fatalf("unsigned capsule: %v", err)
	}

	capsule, _ := wire.DecodeDeadLetter(rec.Payload)
	capsule.Source.Offset += 7 // point at another record
	tampered := rec
	tampered.Payload, _ = capsule.Marshal()
	if _, _, err := deadletter.Verify(reg, dlq, &tampered); !errors.Is(err, sign.ErrBadSignature) {
		t.Fatalf("tampered capsule: %v", err)
	}

	peer := rec
	sig, err := mallory.SignDetached(runtime.DeadLetterDomain, []byte(dlq), []byte(agent), rec.Payload)
	if err != nil {
		t.Fatal(err)
	}
	resigned := rec.Headers.Decode()
	resigned.Set(runtime.HeaderDeadLetterSignature, wire.HeaderValue{Kind: wire.HeaderKindRaw, Data: sig})
	peer.Headers = wire.MustEncodeHeaders(resigned)
	if _, _, err := deadletter.Verify(reg, dlq, &peer); !errors.Is(err, sign.ErrSourceMismatch) {
		t.Fatalf("capsule signed by a peer: %v", err)
	}
}

// A capsule naming a record other than the one it parked is refused by the
// redrive itself, signed or not.
func TestRedriveRefusesACapsuleWhosePayloadIsNotTheRecords(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	rec := parkSigned(t, log, nil)
	handled := plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, IdempotencyKey: "pay-2"}, "pay 20")
	capsule, _ := wire.DecodeDeadLetter(rec.Payload)
	capsule.Source.Offset = handled.Offset
	client := runtime.NewClient(log, runtime.ClientConfig{})
	if _, err := deadletter.Redrive(t.Context(), client, topic, capsule); runtime.CodeOf(err) != runtime.CodeInvalid {
		t.Fatalf("redrive of a capsule naming another record: %v", err)
	}
}

// opGate refuses every effect and records the kind and operation asked.
type opGate struct{ asked chan effect.Effect }

func (g opGate) Admit(_ context.Context, _ *runtime.Client, e *effect.Effect) error {
	g.asked <- *e
	return errRefused
}

func TestARedriveAsksTheGate(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	rec := parkSigned(t, log, nil)
	capsule, _ := wire.DecodeDeadLetter(rec.Payload)
	end, err := log.NextOffset(t.Context(), topic, capsule.Source.PartitionID)
	if err != nil {
		t.Fatal(err)
	}
	g := opGate{asked: make(chan effect.Effect, 1)}
	client := runtime.NewClient(log, runtime.ClientConfig{EffectGate: g})
	if _, err := deadletter.Redrive(t.Context(), client, topic, capsule); !errors.Is(err, errRefused) {
		t.Fatalf("redrive under a refusing gate: %v, want its refusal", err)
	}
	if e := <-g.asked; e.Kind != effect.Publish || e.Operation != runtime.OperationRedrive || e.Topic != topic {
		t.Fatalf("the gate was asked about %+v, want a publish %q to %s", e, runtime.OperationRedrive, topic)
	}
	if after, err := log.NextOffset(t.Context(), topic, capsule.Source.PartitionID); err != nil || after != end {
		t.Fatalf("%s grew from %d to %d (%v), want nothing redriven", topic, end, after, err)
	}
}
