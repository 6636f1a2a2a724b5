package govern_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/govern"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

var body = []byte("wire 25000 to acme")

func proposal(rule govern.Rule, n int) *govern.Proposal {
	return &govern.Proposal{ID: "p1", Body: body, Digest: govern.BodyDigest(body), PolicyVersion: 3,
		Rule: rule, N: n, Voters: []string{"ann", "bob", "cy"}, At: t0, Deadline: t0.Add(time.Hour)}
}

func vote(voter string, yes bool) govern.Vote {
	c := govern.VoteBlock
	if yes {
		c = govern.VoteAllow
	}
	return govern.Vote{Proposal: "p1", Digest: govern.BodyDigest(body), PolicyVersion: 3, Voter: voter, Choice: c, At: t0.Add(time.Minute)}
}

// at is v cast at t.
func at(v govern.Vote, t time.Time) govern.Vote {
	v.At = t
	return v
}

func TestTally(t *testing.T) {
	now := t0.Add(2 * time.Minute)
	cases := []struct {
		name  string
		p     *govern.Proposal
		votes []govern.Vote
		now   time.Time
		want  govern.State
	}{
		{"unanimous commits when all approve", proposal(govern.Unanimous, 0), []govern.Vote{vote("ann", true), vote("bob", true), vote("cy", true)}, now, govern.Committed},
		{"unanimous waits for the last voter", proposal(govern.Unanimous, 0), []govern.Vote{vote("ann", true), vote("bob", true)}, now, govern.Pending},
		{"unanimous rejects on one rejection", proposal(govern.Unanimous, 0), []govern.Vote{vote("ann", true), vote("bob", false)}, now, govern.Rejected},
		{"majority commits at two of three", proposal(govern.Majority, 0), []govern.Vote{vote("ann", true), vote("cy", true)}, now, govern.Committed},
		{"majority rejects at two rejections", proposal(govern.Majority, 0), []govern.Vote{vote("ann", false), vote("cy", false)}, now, govern.Rejected},
		{"n of m commits at n", proposal(govern.NOfM, 2), []govern.Vote{vote("bob", true), vote("cy", true)}, now, govern.Committed},
		{"n of m pends below n", proposal(govern.NOfM, 2), []govern.Vote{vote("bob", true), vote("cy", false)}, now, govern.Pending},
		{"n of m rejects once n is out of reach", proposal(govern.NOfM, 3), []govern.Vote{vote("bob", true), vote("cy", false)}, now, govern.Rejected},
		{"ineligible voters do not count", proposal(govern.NOfM, 2), []govern.Vote{vote("ann", true), vote("mallory", true), vote("eve", true)}, now, govern.Pending},
		{"a voter counts once", proposal(govern.NOfM, 2), []govern.Vote{vote("ann", true), vote("ann", true)}, now, govern.Pending},
		{"a voter's conflicting votes reject", proposal(govern.NOfM, 1), []govern.Vote{vote("ann", false), at(vote("ann", true), t0.Add(2*time.Minute))}, now, govern.Rejected},
		{"votes for another proposal do not count", proposal(govern.NOfM, 1), []govern.Vote{func() govern.Vote { v := vote("ann", true); v.Proposal = "p2"; return v }()}, now, govern.Pending},
		{"votes after the deadline do not count", proposal(govern.NOfM, 1), []govern.Vote{at(vote("ann", true), t0.Add(2*time.Hour))}, t0.Add(3 * time.Hour), govern.Expired},
		{"a pending proposal expires at its deadline", proposal(govern.NOfM, 2), []govern.Vote{vote("ann", true)}, t0.Add(time.Hour), govern.Expired},
		{"an invalid proposal never commits", proposal(govern.NOfM, 4), []govern.Vote{vote("ann", true), vote("bob", true), vote("cy", true)}, now, govern.Rejected},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := govern.Tally(tc.p, tc.votes, tc.now); got.State != tc.want {
				t.Fatalf("state %s (approve %v, reject %v), want %s", got.State, got.Approve, got.Reject, tc.want)
			}
		})
	}
}

func TestTallyIsPure(t *testing.T) {
	p := proposal(govern.Majority, 0)
	votes := []govern.Vote{vote("ann", true), vote("bob", false), vote("cy", true)}
	kept := slices.Clone(votes)
	a, b := govern.Tally(p, votes, t0.Add(time.Minute)), govern.Tally(p, votes, t0.Add(time.Minute))
	if a.State != govern.Committed || b.State != govern.Committed || len(a.Approve) != 2 || len(a.Reject) != 1 || a.Required != 2 {
		t.Fatalf("tallies %+v and %+v, want the same committed result", a, b)
	}
	if !slices.Equal(votes, kept) {
		t.Fatalf("Tally changed its votes: %+v, was %+v", votes, kept)
	}
}

// Digests the reference's Python SDK (laser-sdk 0.8.2, Intent(...).digest)
// computed for these bodies.
func TestBodyDigestIsTheReferences(t *testing.T) {
	for body, want := range map[string]string{
		"transfer $100":         "b9a3334b16af1194079b6cb6934fc288f1202526edef5762e485434c912b9b73",
		strings.Repeat("x", 30): "d5fa6bb2d7f75d39b44e268c196e5fd38d50fb45ce814cf7c1458106991f1a9f",
	} {
		if got := govern.BodyDigest([]byte(body)); got != want {
			t.Errorf("BodyDigest(%q) = %s, want %s", body, got, want)
		}
	}
}

func TestTallyCountsAnAbstentionAsAResponseNotAnApproval(t *testing.T) {
	now := t0.Add(2 * time.Minute)
	abstain := func(voter string) govern.Vote { v := vote(voter, true); v.Choice = govern.VoteAbstain; return v }
	if got := govern.Tally(proposal(govern.NOfM, 2), []govern.Vote{vote("ann", true), abstain("bob")}, now); got.State != govern.Pending || !slices.Equal(got.Abstain, []string{"bob"}) {
		t.Fatalf("one allow and one abstention of 2 needed: %+v, want pending with bob abstaining", got)
	}
	if got := govern.Tally(proposal(govern.NOfM, 2), []govern.Vote{vote("ann", true), abstain("bob"), abstain("cy")}, now); got.State != govern.Rejected {
		t.Fatalf("one allow and two abstentions of 2 needed: %+v, want rejected", got)
	}
	if got := govern.Tally(proposal(govern.Any, 0), []govern.Vote{abstain("ann"), vote("bob", false), abstain("cy")}, now); got.State != govern.Rejected {
		t.Fatalf("any, with no voter allowing: %+v, want rejected", got)
	}
}

func TestTallyWaitsForAMandatoryVoter(t *testing.T) {
	now := t0.Add(2 * time.Minute)
	p := proposal(govern.Any, 0)
	p.Mandatory = []string{"cy"}
	if got := govern.Tally(p, []govern.Vote{vote("ann", true), vote("bob", true)}, now); got.State != govern.Pending {
		t.Fatalf("quorum met without the mandatory voter: %+v, want pending", got)
	}
	if got := govern.Tally(p, []govern.Vote{vote("ann", true)}, p.Deadline); got.State != govern.Expired {
		t.Fatalf("the mandatory voter silent at the deadline: %+v, want expired", got)
	}
	if got := govern.Tally(p, []govern.Vote{vote("cy", true)}, now); got.State != govern.Committed {
		t.Fatalf("the mandatory voter allows: %+v, want committed", got)
	}
}

func TestTallyRejectsWhenAMandatoryVoterBlocksOrAbstains(t *testing.T) {
	now := t0.Add(2 * time.Minute)
	p := proposal(govern.Any, 0)
	p.Mandatory = []string{"cy"}
	for _, c := range []govern.Choice{govern.VoteBlock, govern.VoteAbstain} {
		v := vote("cy", false)
		v.Choice = c
		if got := govern.Tally(p, []govern.Vote{vote("ann", true), v}, now); got.State != govern.Rejected {
			t.Fatalf("the mandatory voter votes %s: %+v, want rejected", c, got)
		}
	}
}

func TestTallyIgnoresAVoteForAnotherDigestOrPolicyVersion(t *testing.T) {
	now := t0.Add(2 * time.Minute)
	otherBody := vote("ann", true)
	otherBody.Digest = govern.BodyDigest([]byte("wire 99999 to mallory"))
	otherPolicy := vote("bob", true)
	otherPolicy.PolicyVersion = 2
	if got := govern.Tally(proposal(govern.Any, 0), []govern.Vote{otherBody, otherPolicy}, now); got.State != govern.Pending || len(got.Approve) != 0 {
		t.Fatalf("votes for another digest and another policy version: %+v, want pending with none counted", got)
	}
}

func TestTallyDoesNotDependOnVoteOrder(t *testing.T) {
	now := t0.Add(2 * time.Minute)
	votes := []govern.Vote{vote("cy", true), vote("ann", false), at(vote("ann", true), t0.Add(30*time.Second)), vote("bob", true)}
	want := govern.Tally(proposal(govern.NOfM, 2), votes, now)
	slices.Reverse(votes)
	if got := govern.Tally(proposal(govern.NOfM, 2), votes, now); !reflect.DeepEqual(got, want) || got.State != govern.Rejected {
		t.Fatalf("reversed votes tallied %+v, first %+v, want the same rejection", got, want)
	}
}

func TestAProposalWithABodyNotMatchingItsDigestIsInvalid(t *testing.T) {
	p := proposal(govern.Any, 0)
	p.Body = []byte("wire 99999 to mallory")
	if err := p.Validate(); err == nil {
		t.Fatal("Validate accepted a body that does not match the digest")
	}
	if got := govern.Tally(p, []govern.Vote{vote("ann", true)}, t0.Add(time.Minute)); got.State != govern.Rejected {
		t.Fatalf("tally of an altered proposal: %+v, want rejected", got)
	}
}

func TestAMandatoryVoterMustBeEligible(t *testing.T) {
	p := proposal(govern.Any, 0)
	p.Mandatory = []string{"dan"}
	if err := p.Validate(); err == nil {
		t.Fatal("Validate accepted a mandatory voter who is not eligible")
	}
}

func TestNewVoteBindsTheProposal(t *testing.T) {
	p := proposal(govern.Any, 0)
	v, err := govern.NewVote(p, "bob", govern.VoteAbstain)
	if err != nil {
		t.Fatal(err)
	}
	if v.Proposal != "p1" || v.Digest != p.Digest || v.PolicyVersion != 3 || v.Choice != govern.VoteAbstain {
		t.Fatalf("NewVote = %+v, want bound to p1's digest and version 3", v)
	}
	if _, err := govern.NewVote(p, "mallory", govern.VoteAllow); err == nil {
		t.Fatal("NewVote accepted a voter the proposal does not name")
	}
	if _, err := govern.NewVote(p, "bob", "maybe"); err == nil {
		t.Fatal("NewVote accepted an unknown choice")
	}
}

// What the reference's Python SDK (laser-sdk 0.8.2) printed for
// Intent(...).__laser_json__() and Vote.cast(...).__laser_json__().
const (
	referenceIntent = `{"intent_id": "01M8VCXM3WNYWYK165WRKCXXQE", "conversation": "01JZ0000000000000000000000", "proposer": "prop", "body": [116, 114, 97, 110, 115, 102, 101, 114, 32, 36, 49, 48, 48], "digest": "b9a3334b16af1194079b6cb6934fc288f1202526edef5762e485434c912b9b73", "eligible_voters": ["a", "b", "c"], "mandatory_voters": ["a"], "policy": {"at_least": 2}, "policy_version": 7, "deadline_micros": 1796215953169956, "at_micros": 1796215853180980}`
	referenceVote   = `{"intent_id": "01M8VCXM3WNYWYK165WRKCXXQE", "intent_digest": "b9a3334b16af1194079b6cb6934fc288f1202526edef5762e485434c912b9b73", "policy_version": 7, "voter": "a", "choice": "abstain", "at_micros": 1796215853181222}`
)

func TestProposalsAndVotesUseTheReferenceLayout(t *testing.T) {
	p, err := govern.DecodeProposal([]byte(referenceIntent))
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "01M8VCXM3WNYWYK165WRKCXXQE" || string(p.Body) != "transfer $100" || p.Rule != govern.NOfM || p.N != 2 ||
		p.PolicyVersion != 7 || !slices.Equal(p.Mandatory, []string{"a"}) || p.At.UnixMicro() != 1796215853180980 || p.Deadline.UnixMicro() != 1796215953169956 {
		t.Fatalf("decoded %+v", p)
	}
	v, err := govern.DecodeVote([]byte(referenceVote))
	if err != nil {
		t.Fatal(err)
	}
	if v.Proposal != p.ID || v.Digest != p.Digest || v.PolicyVersion != 7 || v.Voter != "a" || v.Choice != govern.VoteAbstain {
		t.Fatalf("decoded %+v", v)
	}
	for name, c := range map[string]struct {
		value any
		want  string
	}{"intent": {p, referenceIntent}, "vote": {v, referenceVote}} {
		enc, err := json.Marshal(c.value)
		if err != nil {
			t.Fatal(err)
		}
		var got, want any
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s encodes as %s, want %s", name, enc, c.want)
		}
	}
}

func TestPolicyWireForms(t *testing.T) {
	for rule, want := range map[govern.Rule]string{govern.Unanimous: `"all"`, govern.Any: `"any"`, govern.NOfM: `{"at_least":2}`, govern.Majority: `{"at_least":2}`} {
		p := proposal(rule, 2)
		enc, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(enc, &fields); err != nil {
			t.Fatal(err)
		}
		if got := string(fields["policy"]); got != want {
			t.Errorf("rule %s is written %s, want %s", rule, got, want)
		}
	}
}
