package runtime_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// An event sent WithSigningKey verifies against the key's principal; one
// sent without it is unsigned.
func TestWithSigningKeySignsTheEvent(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	key := newKey(9)
	reg := sign.NewRegistry()
	if err := reg.Enroll("journaler", key.Public()); err != nil {
		t.Fatal(err)
	}
	if err := log.EnsureTopics(t.Context(), 1, "events"); err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]runtime.Option{{runtime.WithSigningKey(key)}, nil} {
		if _, err := c.Send(t.Context(), runtime.Out{Kind: wire.KindEvent, Topic: "events", From: "journaler", Body: []byte("x")}, opts...); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := log.ReadRange(t.Context(), "events", 0, 0, 10)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for i, want := range []bool{true, false} {
		m, err := runtime.DecodeRecord("events", &recs[i], wire.FeaturesNone)
		if err != nil {
			t.Fatal(err)
		}
		v, err := m.Verify(reg)
		if got := err == nil && v.Principal == "journaler"; got != want {
			t.Fatalf("record %d verified %v (%v), want %v", i, got, err, want)
		}
	}
}

// Under a verifier, a request WithAnswerFrom ignores a verified answer from
// a signer it does not accept, even one that came first, and takes the
// accepted one.
func TestWithAnswerFromWaitsForAnAcceptedSigner(t *testing.T) {
	peer, boss := newKey(10), newKey(11)
	reg := sign.NewRegistry()
	if err := reg.Enroll("peer", peer.Public()); err != nil {
		t.Fatal(err)
	}
	if err := reg.EnrollOperator("boss", boss.Public()); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, embedlog.New("laser", embedlog.Config{}), clock.System{}, reg)
	peerAnswered := make(chan struct{})
	runAgent(t, c, runtime.AgentConfig{ID: "peer", Respond: runtime.TopicResponses, SigningKey: peer,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			defer close(peerAnswered)
			return ctx.Respond([]byte("from the peer"))
		})})
	runAgent(t, c, runtime.AgentConfig{ID: "boss", Respond: runtime.TopicResponses, SigningKey: boss,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			<-peerAnswered
			return ctx.Respond([]byte("from the boss"))
		})})
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	m, err := c.Request(ctx, runtime.Out{From: "asker", Body: []byte("may I?")}, runtime.WithTimeout(waitLimit),
		runtime.WithAnswerFrom(func(v sign.Verified) bool { return v.Kind == sign.KindOperator }))
	if err != nil || string(m.Body()) != "from the boss" {
		t.Fatalf("answer %v, %v; want the operator's", m, err)
	}
}
