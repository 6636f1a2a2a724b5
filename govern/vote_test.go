package govern_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// voterKeys enrolls a key for each name and returns the registry and the keys.
func voterKeys(t *testing.T, names ...string) (*sign.Registry, map[string]*sign.Key) {
	t.Helper()
	keys, byName := sign.NewRegistry(), map[string]*sign.Key{}
	for i, name := range names {
		byName[name] = sign.NewKey([32]byte{byte(i + 1)})
		if err := keys.Enroll(name, byName[name].Public()); err != nil {
			t.Fatal(err)
		}
	}
	return keys, byName
}

// decideAfter emits a governed effect under the manual clock, lets cast
// append votes once the proposal waits for them, then moves the clock past
// the deadline and returns the emit's error. Only votes decide: nothing
// else would stop the proposal before its deadline, so if a vote cast
// counts, the result shows it.
func decideAfter(t *testing.T, w *world, clock *lasertest.ManualClock, cast func(p *govern.Proposal)) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := w.emit()
		errc <- err
	}()
	if err := clock.BlockUntil(w.ctx, 1); err != nil {
		t.Fatal(err)
	}
	props, _, err := govern.ReadProposals(w.ctx, w.tr, "", nil)
	if err != nil || len(props) != 1 {
		t.Fatalf("read proposals %+v (%v), want one", props, err)
	}
	cast(&props[0])
	clock.Advance(2 * time.Minute)
	return <-errc
}

// castAt appends voter's choice on p, stamped at p's time, from voter's
// source, signed with key when it is set.
func castAt(t *testing.T, w *world, p *govern.Proposal, voter string, choice govern.Choice, key *sign.Key) {
	t.Helper()
	v, err := govern.NewVote(p, voter, choice)
	if err != nil {
		t.Fatal(err)
	}
	v.At = p.At
	if err := govern.CastVote(w.ctx, w.c, "", v, key); err != nil {
		t.Fatal(err)
	}
}

func TestAForgedVoteDoesNotCountTowardsAProposal(t *testing.T) {
	keys, key := voterKeys(t, "ann", "bob", "cy", "mallory")
	clock := lasertest.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	q := govern.Quorum{Rule: govern.NOfM, N: 2, Voters: []string{"ann", "bob", "cy"}, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "large transfer")), govern.Config{VoterKeys: keys, Clock: clock})
	// mallory approves in ann's name unsigned and in bob's with her own
	// key: counted, the two would commit the proposal.
	err := decideAfter(t, w, clock, func(p *govern.Proposal) {
		castAt(t, w, p, "ann", govern.VoteAllow, nil)
		castAt(t, w, p, "bob", govern.VoteAllow, key["mallory"])
	})
	if !errors.Is(err, govern.ErrRefused) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("emit after two forged approvals: %v, want ErrRefused for an expired proposal", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
}

func TestAForgedApprovalAloneDoesNotCommitUnderVoterKeys(t *testing.T) {
	keys, _ := voterKeys(t, "ann", "bob")
	clock := lasertest.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	q := govern.Quorum{Rule: govern.NOfM, N: 1, Voters: []string{"ann", "bob"}, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "")), govern.Config{VoterKeys: keys, Clock: clock})
	err := decideAfter(t, w, clock, func(p *govern.Proposal) { castAt(t, w, p, "ann", govern.VoteAllow, nil) })
	if !errors.Is(err, govern.ErrRefused) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("emit after one unsigned approval under voter keys: %v, want ErrRefused for an expired proposal", err)
	}
}

func TestAVoteSignedByItsVoterCommitsUnderVoterKeys(t *testing.T) {
	keys, key := voterKeys(t, "ann", "bob")
	clock := lasertest.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	q := govern.Quorum{Rule: govern.NOfM, N: 1, Voters: []string{"ann", "bob"}, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "")), govern.Config{VoterKeys: keys, Clock: clock})
	// Tallied once the clock is past the deadline, the vote still counts:
	// it was cast inside the window, and a met quorum wins over expiry.
	err := decideAfter(t, w, clock, func(p *govern.Proposal) { castAt(t, w, p, "ann", govern.VoteAllow, key["ann"]) })
	if err != nil {
		t.Fatalf("emit after ann's signed approval: %v, want it committed", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 1 {
		t.Fatalf("%d messages published, want the governed one", len(got))
	}
}

func TestAVoteFromAnotherSourceThanItsVoterDoesNotCount(t *testing.T) {
	clock := lasertest.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	q := govern.Quorum{Rule: govern.NOfM, N: 1, Voters: []string{"ann", "bob"}, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "")), govern.Config{Clock: clock})
	// mallory publishes, from her own source, a vote allowing in ann's name.
	err := decideAfter(t, w, clock, func(p *govern.Proposal) {
		forged, err := govern.NewVote(p, "ann", govern.VoteAllow)
		if err != nil {
			t.Fatal(err)
		}
		forged.At = p.At
		body, err := json.Marshal(forged)
		if err != nil {
			t.Fatal(err)
		}
		ungoverned := runtime.NewClient(w.tr, runtime.ClientConfig{})
		t.Cleanup(func() { _ = ungoverned.Close() })
		if _, err := ungoverned.Send(w.ctx, runtime.Out{Kind: wire.KindEvent, Topic: govern.TopicProposals, From: "mallory", Body: body}, runtime.WithOperation(govern.OperationVote), runtime.WithContentType(wire.ContentJSON)); err != nil {
			t.Fatal(err)
		}
	})
	if !errors.Is(err, govern.ErrRefused) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("emit after a vote in ann's name from mallory: %v, want ErrRefused for an expired proposal", err)
	}
}

func TestWithVoterKeysOnlyTheVoterSignedVoteIsRead(t *testing.T) {
	keys, key := voterKeys(t, "ann", "bob", "cy", "mallory")
	w := governed(t, fixed(govern.Allow()), govern.Config{})
	p := &govern.Proposal{ID: "01M8VCXM3WNYWYK165WRKCXXQE", Voters: []string{"ann", "bob", "cy"}, Rule: govern.Any,
		Body: []byte("x"), Digest: govern.BodyDigest([]byte("x")), At: time.UnixMicro(1), Deadline: time.UnixMicro(2)}
	castAt(t, w, p, "ann", govern.VoteAllow, key["ann"])    // genuine
	castAt(t, w, p, "bob", govern.VoteAllow, nil)           // unsigned
	castAt(t, w, p, "cy", govern.VoteAllow, key["mallory"]) // someone else's key
	plain, err := json.Marshal(govern.Vote{Proposal: p.ID, Digest: p.Digest, Voter: "cy", Choice: govern.VoteAllow, At: p.At})
	if err != nil {
		t.Fatal(err)
	}
	headers := wire.Headers{{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(wire.ContentJSON))}}
	if _, err := w.c.Publish(w.ctx, govern.TopicProposals, runtime.Outgoing{Key: "k", Headers: headers, Payload: plain}); err != nil {
		t.Fatal(err)
	}
	_, votes, err := govern.ReadProposals(w.ctx, w.tr, "", keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(votes) != 1 || votes[0].Voter != "ann" {
		t.Fatalf("read votes %+v, want only ann's signed vote", votes)
	}
	if _, votes, err = govern.ReadProposals(w.ctx, w.tr, "", nil); err != nil || len(votes) != 4 {
		t.Fatalf("without voter keys read votes %+v (%v), want all four: each names its source's voter or has none", votes, err)
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
