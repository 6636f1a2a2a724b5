package crashcontext_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/lasergo/laser/crashcontext"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// crashed sets up a conversation on log whose command an agent rejected
// (parked in agent.dlq, the capsule signed with the agent's key when one
// is given) after the gate blocked a payment in it, and returns the
// conversation.
func crashed(t *testing.T, log runtime.Transport, key ...*sign.Key) wire.ID {
	t.Helper()
	ctx := t.Context()
	gate := govern.NewGate(govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		if a.Topic == "payments" {
			return govern.Block("payments are frozen"), nil
		}
		return govern.Allow(), nil
	}), govern.Config{})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(log, runtime.ClientConfig{EffectGate: gate, Logger: quiet})
	if err := client.Bootstrap(ctx, 2, "payments"); err != nil {
		t.Fatal(err)
	}
	parked := make(chan struct{}, 1)
	tuning := runtime.Tuning{DeadLetterSink: func(context.Context, runtime.DeadLetter) { parked <- struct{}{} }}
	var signing *sign.Key
	if len(key) > 0 {
		signing = key[0]
	}
	agent, err := client.NewAgent(runtime.AgentConfig{
		ID: "billing", Listen: runtime.TopicCommands,
		Handler:    runtime.HandlerFunc(func(*runtime.Ctx) error { return runtime.Reject(errors.New("card declined")) }),
		Tuning:     tuning,
		SigningKey: signing,
	})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Shutdown(context.WithoutCancel(ctx)) })
	conv := client.IDs().NewID()
	if _, err := client.SendPlain(ctx, "payments", wire.Provenance{Conversation: conv, Agent: "planner"}, []byte("pay 40 EUR")); err == nil {
		t.Fatal("the gate let the payment through")
	}
	cmd := runtime.Out{From: "planner", Target: "billing", Body: []byte("charge card 4242")}
	if _, err := client.Send(ctx, cmd, runtime.WithConversation(conv)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-parked:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	return conv
}

// TestCrashContextBundlesJournalDeadLetterAndDecision reads the crash
// context of a conversation on every log.
func TestCrashContextBundlesJournalDeadLetterAndDecision(t *testing.T) {
	for _, tr := range featuretest.Transports(t, "crashcontext") {
		t.Run(tr.Name, func(t *testing.T) {
			log := tr.New(t)
			conv := crashed(t, log)
			cc, err := crashcontext.Read(t.Context(), log, conv, crashcontext.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(cc.Journal) != 1 || string(cc.Journal[0].Body()) != "charge card 4242" {
				t.Errorf("journal = %d records, want the command", len(cc.Journal))
			}
			dl := cc.DeadLetter
			if dl == nil || dl.Capsule.Reason != wire.ReasonRejected || !strings.Contains(string(dl.Capsule.Payload), "charge card 4242") {
				t.Fatalf("dead letter = %+v, want the rejected command's capsule", dl)
			}
			d := cc.LastDecision
			if d == nil || d.Evidence.Action.Topic != "payments" || d.Evidence.Reason != "payments are frozen" {
				t.Fatalf("last decision = %+v, want the blocked payment", d)
			}
			sum := cc.Summary()
			for _, want := range []string{"journal (1", "charge card 4242", "dead letter at", "rejected", "last decision at", "payments are frozen"} {
				if !strings.Contains(sum, want) {
					t.Errorf("summary lacks %q:\n%s", want, sum)
				}
			}
			if again, _ := crashcontext.Read(t.Context(), log, conv, crashcontext.Options{}); again.Summary() != sum {
				t.Error("the summary is not the same on a second read")
			}
		})
	}
}

func TestCrashContextOfAConversationThatNeverExisted(t *testing.T) {
	log := featuretest.EmbeddedLog(t)
	crashed(t, log)
	never := wire.ID{0xde, 0xad}
	_, err := crashcontext.Read(t.Context(), log, never, crashcontext.Options{})
	if !errors.Is(err, crashcontext.ErrUnknownConversation) || !strings.Contains(err.Error(), never.String()) {
		t.Fatalf("Read = %v, want ErrUnknownConversation naming the id", err)
	}
	if _, err := crashcontext.Read(t.Context(), log, wire.ID{}, crashcontext.Options{}); err == nil {
		t.Error("a zero conversation id was read")
	}
}

// TestCrashContextUnderKeysCountsOnlyWhatVerifies: with Keys, a capsule
// signed by the agent's enrolled key is the dead letter, an unsigned one is
// left out and counted, and the journal keeps only verified records (the
// planner's command here is unsigned).
func TestCrashContextUnderKeysCountsOnlyWhatVerifies(t *testing.T) {
	var seed [32]byte
	copy(seed[:], "billing's key")
	key := sign.NewKey(seed)
	keys := sign.NewRegistry()
	if err := keys.Enroll("billing", key.Public()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		key     []*sign.Key
		parked  bool
		refused int
	}{
		{"signed capsule", []*sign.Key{key}, true, 0},
		{"unsigned capsule", nil, false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := featuretest.EmbeddedLog(t)
			conv := crashed(t, log, c.key...)
			cc, err := crashcontext.Read(t.Context(), log, conv, crashcontext.Options{Keys: keys})
			if err != nil {
				t.Fatal(err)
			}
			if !cc.Verified || (cc.DeadLetter != nil) != c.parked || cc.Refused != c.refused {
				t.Fatalf("verified %v, dead letter %v, refused %d; want a dead letter %v and %d refused", cc.Verified, cc.DeadLetter != nil, cc.Refused, c.parked, c.refused)
			}
			if len(cc.Journal) != 0 {
				t.Errorf("the journal kept %d unsigned records under Keys", len(cc.Journal))
			}
		})
	}
}

// TestCrashContextSaysWhenDecisionsWereCut: past MaxAuditBytes the
// decisions are not read, and the context says a newer one may exist.
func TestCrashContextSaysWhenDecisionsWereCut(t *testing.T) {
	log := featuretest.EmbeddedLog(t)
	conv := crashed(t, log)
	cc, err := crashcontext.Read(t.Context(), log, conv, crashcontext.Options{MaxAuditBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !cc.DecisionsCut || cc.LastDecision != nil || cc.DeadLetter == nil {
		t.Fatalf("cut %v, decision %v, dead letter %v; want the decision cut and the dead letter still read", cc.DecisionsCut, cc.LastDecision, cc.DeadLetter)
	}
}

// replayCapsule republishes conv's genuine dead-letter capsule, its
// signature headers untouched, filed under conversation other.
func replayCapsule(t *testing.T, log runtime.Transport, conv, other wire.ID) {
	t.Helper()
	ctx := t.Context()
	n, err := log.Partitions(ctx, runtime.TopicDLQ)
	if err != nil {
		t.Fatal(err)
	}
	for p := range n {
		next, err := log.NextOffset(ctx, runtime.TopicDLQ, p)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := log.ReadRange(ctx, runtime.TopicDLQ, p, 0, int(next))
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs {
			if c, ok := wire.HeaderConversation(rec.Headers); !ok || c != conv {
				continue
			}
			h := rec.Headers.Decode()
			h.Set(wire.HeaderConversationID, wire.StringValue(other.String()))
			if _, err := log.Publish(ctx, runtime.TopicDLQ, runtime.Outgoing{Key: other.String(), Headers: h, Payload: rec.Payload}); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("no capsule of the conversation to replay")
}

// TestCrashContextRefusesACapsuleReplayedUnderAnotherConversation: a
// genuine signed capsule republished with another conversation's headers
// verifies (its signature does not cover them), but the envelope it parked
// is of the first conversation: it is not the other's dead letter.
func TestCrashContextRefusesACapsuleReplayedUnderAnotherConversation(t *testing.T) {
	var seed [32]byte
	copy(seed[:], "billing's key")
	key := sign.NewKey(seed)
	keys := sign.NewRegistry()
	if err := keys.Enroll("billing", key.Public()); err != nil {
		t.Fatal(err)
	}
	log := featuretest.EmbeddedLog(t)
	conv := crashed(t, log, key)
	other := wire.ID{0x01, 0x02, 0x03}
	// The other conversation has a record of its own: a blocked payment.
	gate := govern.NewGate(govern.GovernorFunc(func(context.Context, *govern.Action) (govern.Decision, error) {
		return govern.Block("payments are frozen"), nil
	}), govern.Config{})
	client := runtime.NewClient(log, runtime.ClientConfig{EffectGate: gate, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := client.SendPlain(t.Context(), "payments", wire.Provenance{Conversation: other, Agent: "planner"}, []byte("pay 1 EUR")); err == nil {
		t.Fatal("the gate let the payment through")
	}
	replayCapsule(t, log, conv, other)
	cc, err := crashcontext.Read(t.Context(), log, other, crashcontext.Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if cc.DeadLetter != nil || cc.Refused != 1 {
		t.Fatalf("dead letter %+v, refused %d; want the replayed capsule refused", cc.DeadLetter, cc.Refused)
	}
	if orig, err := crashcontext.Read(t.Context(), log, conv, crashcontext.Options{Keys: keys}); err != nil || orig.DeadLetter == nil || !orig.DeadLetter.Signed {
		t.Fatalf("the original conversation's own capsule: %v, %+v; want it shown as signed", err, orig)
	}
}

// TestCrashContextSaysAParkedPlainMessagesProvenanceIsUnverified: a
// verified capsule of a plain message is shown, but its provenance rides
// on headers no signature covers, so it is not Signed and the summary
// says so.
func TestCrashContextSaysAParkedPlainMessagesProvenanceIsUnverified(t *testing.T) {
	var seed [32]byte
	copy(seed[:], "billing's key")
	key := sign.NewKey(seed)
	keys := sign.NewRegistry()
	if err := keys.Enroll("billing", key.Public()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	log := featuretest.EmbeddedLog(t)
	client := runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := client.Bootstrap(ctx, 1); err != nil {
		t.Fatal(err)
	}
	parked := make(chan struct{}, 1)
	agent, err := client.NewAgent(runtime.AgentConfig{
		ID: "billing", Listen: runtime.TopicCommands,
		Handler:    runtime.HandlerFunc(func(*runtime.Ctx) error { return runtime.Reject(errors.New("card declined")) }),
		Tuning:     runtime.Tuning{DeadLetterSink: func(context.Context, runtime.DeadLetter) { parked <- struct{}{} }},
		SigningKey: key,
	})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Shutdown(context.WithoutCancel(ctx)) })
	conv := client.IDs().NewID()
	if _, err := client.SendPlain(ctx, runtime.TopicCommands, wire.Provenance{Conversation: conv, Agent: "planner"}, []byte("charge card 4242")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-parked:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	cc, err := crashcontext.Read(ctx, log, conv, crashcontext.Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if cc.DeadLetter == nil || cc.DeadLetter.Signed || cc.Refused != 0 {
		t.Fatalf("dead letter %+v, refused %d; want the verified capsule shown, not Signed", cc.DeadLetter, cc.Refused)
	}
	if sum := cc.Summary(); !strings.Contains(sum, "provenance: unverified") {
		t.Fatalf("the summary does not say the provenance is unverified:\n%s", sum)
	}
}
