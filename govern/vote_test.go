package govern_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

func TestAForgedVoteDoesNotCountTowardsAProposal(t *testing.T) {
	keys := sign.NewRegistry()
	voterKey := map[string]*sign.Key{}
	for i, name := range []string{"ann", "bob", "cy", "mallory"} {
		voterKey[name] = sign.NewKey([32]byte{byte(i + 1)})
		if err := keys.Enroll(name, voterKey[name].Public()); err != nil {
			t.Fatal(err)
		}
	}
	q := govern.Quorum{Rule: govern.NOfM, N: 2, Voters: []string{"ann", "bob", "cy"}, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "large transfer")), govern.Config{VoterKeys: keys})
	if err := w.tr.EnsureTopics(w.ctx, 1, govern.TopicProposals); err != nil {
		t.Fatal(err)
	}
	// One handler casts every vote, so their order is fixed: mallory first
	// approves in ann's name (unsigned) and in bob's (with her own key),
	// then bob and cy reject with their own keys.
	w.start(runtime.AgentConfig{ID: "mallory", Listen: govern.TopicProposals, Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
		env := hc.Message().Envelope
		if env == nil || env.Operation == nil || *env.Operation != govern.OperationProposal {
			return nil
		}
		var p govern.Proposal
		if err := cbor.Unmarshal(env.Body, &p); err != nil {
			return runtime.Reject(err)
		}
		votes := []struct {
			voter string
			yes   bool
			key   *sign.Key
		}{{"ann", true, nil}, {"bob", true, voterKey["mallory"]}, {"bob", false, voterKey["bob"]}, {"cy", false, voterKey["cy"]}}
		for _, v := range votes {
			if err := govern.CastVote(hc, hc.Client(), "", govern.Vote{Proposal: p.ID, Voter: v.voter, Approve: v.yes}, v.key); err != nil {
				return err
			}
		}
		return nil
	})})
	if _, err := w.emit(); !errors.Is(err, govern.ErrRefused) {
		t.Fatalf("emit after forged approvals and two real rejections: %v, want ErrRefused", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
}

func TestAVoteFromAnotherSourceThanItsVoterDoesNotCount(t *testing.T) {
	q := govern.Quorum{Rule: govern.NOfM, N: 1, Voters: []string{"ann", "bob"}, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "")), govern.Config{})
	if err := w.tr.EnsureTopics(w.ctx, 1, govern.TopicProposals); err != nil {
		t.Fatal(err)
	}
	// mallory publishes a vote naming ann from her own source, then ann and
	// bob reject.
	ungoverned := govern.NewGate(fixed(govern.Allow()), govern.Config{})
	w.start(runtime.AgentConfig{ID: "mallory", Listen: govern.TopicProposals, Gate: ungoverned, Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
		env := hc.Message().Envelope
		if env == nil || env.Operation == nil || *env.Operation != govern.OperationProposal {
			return nil
		}
		var p govern.Proposal
		if err := cbor.Unmarshal(env.Body, &p); err != nil {
			return runtime.Reject(err)
		}
		em, err := cbor.EncOptions{Time: cbor.TimeRFC3339Nano}.EncMode()
		if err != nil {
			return err
		}
		body, err := em.Marshal(govern.Vote{Proposal: p.ID, Voter: "ann", Approve: true, At: hc.Client().Clock().Now().UTC().Truncate(time.Microsecond)})
		if err != nil {
			return err
		}
		if _, err := hc.Client().Send(hc, runtime.Out{Kind: wire.KindEvent, Topic: govern.TopicProposals, From: "mallory", Body: body}, runtime.WithOperation(govern.OperationVote), runtime.WithContentType(wire.ContentCBOR)); err != nil {
			return err
		}
		for _, voter := range []string{"ann", "bob"} {
			if err := govern.CastVote(hc, hc.Client(), "", govern.Vote{Proposal: p.ID, Voter: voter}, nil); err != nil {
				return err
			}
		}
		return nil
	})})
	if _, err := w.emit(); !errors.Is(err, govern.ErrRefused) {
		t.Fatalf("emit after a vote in ann's name from mallory: %v, want ErrRefused", err)
	}
}
