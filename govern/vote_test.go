package govern_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

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
		p, err := govern.DecodeProposal(env.Body)
		if err != nil {
			return runtime.Reject(err)
		}
		votes := []struct {
			voter string
			yes   bool
			key   *sign.Key
		}{{"ann", true, nil}, {"bob", true, voterKey["mallory"]}, {"bob", false, voterKey["bob"]}, {"cy", false, voterKey["cy"]}}
		for _, v := range votes {
			choice := govern.VoteBlock
			if v.yes {
				choice = govern.VoteAllow
			}
			if err := govern.CastVote(hc, hc.Client(), "", govern.Vote{Proposal: p.ID, Digest: p.Digest, PolicyVersion: p.PolicyVersion, Voter: v.voter, Choice: choice}, v.key); err != nil {
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
	w.start(runtime.AgentConfig{ID: "mallory", Listen: govern.TopicProposals, EffectGate: ungoverned, Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
		env := hc.Message().Envelope
		if env == nil || env.Operation == nil || *env.Operation != govern.OperationProposal {
			return nil
		}
		p, err := govern.DecodeProposal(env.Body)
		if err != nil {
			return runtime.Reject(err)
		}
		forged, err := govern.NewVote(&p, "ann", govern.VoteAllow)
		if err != nil {
			return err
		}
		forged.At = hc.Client().Clock().Now().UTC().Truncate(time.Microsecond)
		body, err := json.Marshal(forged)
		if err != nil {
			return err
		}
		if _, err := hc.Client().Send(hc, runtime.Out{Kind: wire.KindEvent, Topic: govern.TopicProposals, From: "mallory", Body: body}, runtime.WithOperation(govern.OperationVote), runtime.WithContentType(wire.ContentCBOR)); err != nil {
			return err
		}
		for _, voter := range []string{"ann", "bob"} {
			v, err := govern.NewVote(&p, voter, govern.VoteBlock)
			if err != nil {
				return err
			}
			if err := govern.CastVote(hc, hc.Client(), "", v, nil); err != nil {
				return err
			}
		}
		return nil
	})})
	if _, err := w.emit(); !errors.Is(err, govern.ErrRefused) {
		t.Fatalf("emit after a vote in ann's name from mallory: %v, want ErrRefused", err)
	}
}

// The reference's Python SDK publishes an intent or a vote as a typed
// record: a plain JSON payload. ReadProposals reads both; such a vote has
// no source or signature, so with VoterKeys it does not count.
func TestTypedRecordsOfTheReferenceAreRead(t *testing.T) {
	w := governed(t, fixed(govern.Allow()), govern.Config{})
	if err := w.tr.EnsureTopics(w.ctx, 1, govern.TopicProposals); err != nil {
		t.Fatal(err)
	}
	headers := wire.Headers{{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(wire.ContentJSON))}}
	for _, body := range []string{referenceIntent, referenceVote} {
		if _, err := w.c.Publish(w.ctx, govern.TopicProposals, runtime.Outgoing{Key: "k", Headers: headers, Payload: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	props, votes, err := govern.ReadProposals(w.ctx, w.tr, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(props) != 1 || props[0].ID != "01M8VCXM3WNYWYK165WRKCXXQE" || len(votes) != 1 || votes[0].Choice != govern.VoteAbstain {
		t.Fatalf("read %+v and %+v, want the reference's intent and its abstention", props, votes)
	}
	if _, votes, err = govern.ReadProposals(w.ctx, w.tr, "", sign.NewRegistry()); err != nil || len(votes) != 0 {
		t.Fatalf("with voter keys read votes %+v (%v), want none: a typed record is unsigned", votes, err)
	}
}
