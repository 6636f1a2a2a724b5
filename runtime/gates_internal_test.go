package runtime

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// gateDedup is a BatchDeduplicator that remembers what it was asked.
type gateDedup struct {
	seen     map[string]bool
	observed []string
	claimed  []string
}

func newGateDedup() *gateDedup { return &gateDedup{seen: make(map[string]bool)} }

func (d *gateDedup) Observe(_ context.Context, key string) (bool, error) {
	d.observed = append(d.observed, key)
	fresh := !d.seen[key]
	d.seen[key] = true
	return fresh, nil
}
func (d *gateDedup) Complete(context.Context, string) error { return nil }
func (d *gateDedup) ClaimBatch(_ context.Context, keys []string, states []dedup.KeyState) error {
	d.claimed = append(d.claimed, keys...)
	for i := range states {
		states[i] = dedup.KeyClaimed
	}
	return nil
}
func (d *gateDedup) CompleteBatch(context.Context, []string) error { return nil }
func (d *gateDedup) ReleaseBatch(context.Context, []string) error  { return nil }
func (d *gateDedup) Lease() time.Duration                          { return time.Minute }

// sourceVerifier takes an envelope as signed by its source when the source
// is "planner", and refuses every other.
type sourceVerifier struct{}

func (sourceVerifier) VerifyObserved(env *wire.Envelope, _ wire.SignatureContext, _ uint64) (sign.Verified, error) {
	if env.Source != "planner" {
		return sign.Verified{}, errors.New("no enrolled key signed it")
	}
	return sign.Verified{Principal: "planner"}, nil
}

// gateShape is one record shape that some gate decides on.
type gateShape struct {
	name string
	rec  Incoming
	// reaches says whether the record gets through every gate to the dedup
	// gate, without and with a Verifier.
	reaches, reachesVerified bool
	// claimed says whether the pre-filter claims its key ahead (without a
	// Verifier; with one nothing is claimed ahead).
	claimed bool
}

func plainShape(t *testing.T, name string, prov wire.Provenance, reaches, claimed bool) gateShape {
	t.Helper()
	h, err := prov.Headers()
	if err != nil {
		t.Fatal(err)
	}
	return gateShape{name: name, rec: Incoming{Headers: wire.MustEncodeHeaders(h), Payload: []byte("{}")}, reaches: reaches, claimed: claimed}
}

func agdxShape(t *testing.T, name string, env *wire.Envelope, reaches, reachesVerified, claimed bool) gateShape {
	t.Helper()
	payload, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return gateShape{name: name, rec: Incoming{Headers: wire.MustEncodeHeaders(wire.EnvelopeHeaders(env, wire.ContentJSON)), Payload: payload},
		reaches: reaches, reachesVerified: reachesVerified, claimed: claimed}
}

// gateShapes is a log of every gate-relevant record shape, in the order
// the windows (fence, replay) need.
func gateShapes(t *testing.T) []gateShape {
	convA, convB := wire.IDFromUint128(9, 1), wire.IDFromUint128(9, 2)
	fence := func(f uint64) *uint64 { return &f }
	signed := func(rec uint64, source, key string, target *wire.AgentID) *wire.Envelope {
		id, k := wire.IDFromUint128(7, rec), wire.IdempotencyKey(key)
		return &wire.Envelope{Kind: wire.KindEvent, Record: &id, Conversation: convA, Source: wire.AgentID(source),
			Target: target, IdempotencyKey: &k, Operation: ptr("noted"), Body: []byte("{}")}
	}
	elsewhere := ptr(wire.AgentID("billing"))
	shapes := []gateShape{
		plainShape(t, "plain, to no one", wire.Provenance{Conversation: convA, Agent: "planner", IdempotencyKey: "k1"}, true, true),
		plainShape(t, "plain, to this agent", wire.Provenance{Conversation: convA, Agent: "planner", Target: "worker", IdempotencyKey: "k2"}, true, true),
		plainShape(t, "plain, to another agent", wire.Provenance{Conversation: convA, Agent: "planner", Target: "billing", IdempotencyKey: "k3"}, false, false),
		plainShape(t, "plain, a fresh fence", wire.Provenance{Conversation: convB, Agent: "planner", IdempotencyKey: "k4", Fence: fence(5)}, true, true),
		// The fence gate remembers, so the pre-filter claims its key and
		// the gate leaves the claim unused.
		plainShape(t, "plain, a superseded fence", wire.Provenance{Conversation: convB, Agent: "planner", IdempotencyKey: "k5", Fence: fence(3)}, false, true),
		agdxShape(t, "agdx, signed by its source", signed(1, "planner", "k6", nil), true, true, true),
		// Without a Verifier nothing tells the replay; it reaches dedup,
		// which drops it as a duplicate of k6.
		agdxShape(t, "agdx, the replay of a signed record", signed(1, "planner", "k6", nil), true, false, true),
		agdxShape(t, "agdx, not signed by its source", signed(2, "mallory", "k7", nil), true, false, true),
		agdxShape(t, "agdx, signed, to another agent", signed(3, "planner", "k8", elsewhere), false, false, false),
		{name: "undecodable", rec: Incoming{Headers: wire.MustEncodeHeaders([]wire.Header{{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(wire.AgentOpVersion)}}), Payload: []byte{0xff}}},
	}
	for i := range shapes {
		shapes[i].rec.Offset = uint64(i)
	}
	return shapes
}

// TestGatePathsAgree runs every gate-relevant record shape through the
// pipeline, the warm-up's replay of the gates and the claim pre-filter,
// each on a consumer of its own, and checks that the three decide alike:
// what reaches the live dedup gate is what the warm-up marks, and what the
// pre-filter claims ahead.
func TestGatePathsAgree(t *testing.T) {
	for _, verified := range []bool{false, true} {
		name := "unverified"
		if verified {
			name = "verified"
		}
		t.Run(name, func(t *testing.T) {
			shapes := gateShapes(t)
			consumer := func(dd dedup.Deduplicator) *Consumer {
				cfg := ConsumerConfig{
					Topic: "agent.events", Group: "worker", Agent: "worker",
					Handler: HandlerFunc(func(*Ctx) error { return nil }),
					Client:  NewClient(nopTransport{}, ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
				}
				cfg.Deduplicator = dd
				if verified {
					cfg.Verifier = sourceVerifier{}
				}
				c, err := NewConsumer(nopTransport{}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				return c
			}

			liveDedup := newGateDedup()
			live := consumer(liveDedup)
			warm := consumer(newGateDedup())
			claimDedup := newGateDedup()
			pre := consumer(claimDedup)

			decoded := make([]decodedRecord, len(shapes))
			for i := range shapes {
				decoded[i].m, decoded[i].err = DecodeRecord(pre.cfg.Topic, &shapes[i].rec, 0)
			}
			kc := &keyCompleter{completing: make(map[string]int), batched: make(map[string]int)}
			cs := &claimSet{c: pre, bd: claimDedup, kc: kc, index: make(map[string]int)}
			if err := cs.claim(t.Context(), decoded); err != nil {
				t.Fatal(err)
			}

			for i, sh := range shapes {
				before := len(liveDedup.observed)
				if _, err := live.process(t.Context(), &sh.rec, live.decode(nil, &sh.rec)); err != nil {
					t.Fatalf("%s: the pipeline failed: %v", sh.name, err)
				}
				reached := len(liveDedup.observed) > before

				m, err := DecodeRecord(warm.cfg.Topic, &sh.rec, 0)
				warmed := err == nil && warm.passedGates(m)

				claimed := false
				if m := decoded[i].m; m != nil {
					claimed = slices.Contains(claimDedup.claimed, dedup.Key(m.Provenance.Agent, m.Provenance.IdempotencyKey))
				}

				want := sh.reaches
				if verified {
					want = sh.reachesVerified
				}
				if reached != want {
					t.Errorf("%s: the pipeline took it to the dedup gate: %v, want %v", sh.name, reached, want)
				}
				if warmed != reached {
					t.Errorf("%s: the warm-up's gates passed it: %v, the pipeline's: %v", sh.name, warmed, reached)
				}
				wantClaimed := sh.claimed && !verified
				if claimed != wantClaimed {
					t.Errorf("%s: claimed ahead: %v, want %v", sh.name, claimed, wantClaimed)
				}
				if reached && !claimed && !verified {
					t.Errorf("%s: reached the dedup gate without its key claimed ahead", sh.name)
				}
			}
		})
	}
}
