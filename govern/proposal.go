package govern

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/internal/blake3"
)

// Rule is how votes combine into a decision.
type Rule string

// Rules. On the wire (the reference's IntentPolicy) Unanimous is "all", Any
// is "any" and NOfM is {"at_least": N}; Majority is written as NOfM with N
// more than half the eligible voters, so it reads back as NOfM.
const (
	Unanimous Rule = "unanimous" // every eligible voter allows
	Majority  Rule = "majority"  // more than half of the eligible voters allow
	NOfM      Rule = "n_of_m"    // at least Quorum.N eligible voters allow
	Any       Rule = "any"       // at least one eligible voter allows
)

// Choice is one voter's ballot.
type Choice string

// Choices, as the reference's VoteChoice spells them.
const (
	VoteAllow   Choice = "allow"
	VoteBlock   Choice = "block"
	VoteAbstain Choice = "abstain" // counts as a response, never towards the quorum
)

// valid reports whether c is one of the three choices.
func (c Choice) valid() bool { return c == VoteAllow || c == VoteBlock || c == VoteAbstain }

// Proposal asks the eligible voters to allow one effect: the reference's
// durable Intent. It is bound to its Body by Digest and to the policy in
// force when it was proposed by PolicyVersion, and only votes naming both
// count. It rides TopicProposals as an AGDX event with operation
// OperationProposal and a JSON body in the reference's layout
// (MarshalJSON).
type Proposal struct {
	// ID is the intent id, a ULID.
	ID string
	// Conversation is the conversation's ULID, the usual partition key.
	Conversation string
	Proposer     string
	// Body is the proposed effect, opaque to the fold. The gate writes an
	// Effect (see Proposal.Effect).
	Body []byte
	// Digest is BodyDigest(Body).
	Digest string
	// Voters are the only principals whose votes count.
	Voters []string
	// Mandatory voters must be eligible and must allow before it commits.
	Mandatory []string
	Rule      Rule
	// N is the approvals NOfM needs.
	N int
	// PolicyVersion is the policy version frozen when it was proposed; a
	// vote for another version does not count.
	PolicyVersion uint64
	// At and Deadline bound the votes that count (Unix microseconds on the wire).
	At       time.Time
	Deadline time.Time
}

// Vote is one voter's choice on a proposal: the reference's Vote. It names
// the proposal's digest and policy version, so a vote for a changed body or
// another policy does not count. It rides TopicProposals as an AGDX event
// with operation OperationVote. Who voted is a claim unless the record is
// signed.
type Vote struct {
	Proposal      string // the proposal's ID
	Digest        string // the proposal's Digest
	PolicyVersion uint64
	Voter         string
	Choice        Choice
	At            time.Time
}

// Effect is the body the gate proposes: what the governed effect is and why
// it needs votes.
type Effect struct {
	Action Summary `cbor:"action"`
	Reason string  `cbor:"reason,omitempty"`
}

// Effect decodes the body the gate wrote; a proposal from elsewhere (a
// reference agent's intent) may carry any bytes, and then this errors.
func (p *Proposal) Effect() (Effect, error) {
	var e Effect
	if err := cbor.Unmarshal(p.Body, &e); err != nil {
		return Effect{}, fmt.Errorf("govern: proposal %s body is not a laser-go effect: %w", p.ID, err)
	}
	return e, nil
}

// BodyDigest is the digest that binds a proposal to its body, as the
// reference computes it: BLAKE3 (lowercase hex) of the CBOR map
// {"body": [each byte as an unsigned integer]}.
func BodyDigest(body []byte) string {
	// The reference encodes the body field as a sequence of integers, not
	// a byte string, so the digest only agrees in this form.
	seq := make([]uint16, len(body))
	for i, b := range body {
		seq[i] = uint16(b)
	}
	enc, err := cbor.Marshal(struct {
		Body []uint16 `cbor:"body"`
	}{seq})
	if err != nil { // unreachable: integers always encode
		panic(err)
	}
	return blake3.SumHex(enc)
}

// State is where a proposal stands.
type State string

// States. Rejected and Expired are the reference's "aborted".
const (
	Pending   State = "pending"
	Committed State = "committed"
	Rejected  State = "rejected"
	Expired   State = "expired"
)

// Result is a tally: the state, why, and the counted votes that decided it.
type Result struct {
	State   State
	Reason  string
	Approve []string // voters who allowed, by name
	Reject  []string // voters who blocked, by name
	Abstain []string // voters who abstained, by name
	// Required is the approvals the rule needs.
	Required int
}

// Validate reports a proposal no vote could ever commit, or whose body
// does not match its digest.
func (p *Proposal) Validate() error {
	if p.ID == "" {
		return fmt.Errorf("govern: proposal has no id")
	}
	if len(p.Voters) == 0 {
		return fmt.Errorf("govern: proposal %s has no eligible voters", p.ID)
	}
	eligible := map[string]bool{}
	for _, v := range p.Voters {
		if eligible[v] {
			return fmt.Errorf("govern: proposal %s names voter %q twice", p.ID, v)
		}
		eligible[v] = true
	}
	mandatory := map[string]bool{}
	for _, v := range p.Mandatory {
		if mandatory[v] {
			return fmt.Errorf("govern: proposal %s names mandatory voter %q twice", p.ID, v)
		}
		if !eligible[v] {
			return fmt.Errorf("govern: proposal %s: mandatory voter %q is not eligible", p.ID, v)
		}
		mandatory[v] = true
	}
	switch p.Rule {
	case Unanimous, Majority, Any:
	case NOfM:
		if p.N < 1 || p.N > len(p.Voters) {
			return fmt.Errorf("govern: proposal %s needs %d of %d voters", p.ID, p.N, len(p.Voters))
		}
	default:
		return fmt.Errorf("govern: proposal %s has unknown rule %q", p.ID, p.Rule)
	}
	if !p.Deadline.After(p.At) {
		return fmt.Errorf("govern: proposal %s has its deadline %s not after its time %s", p.ID, p.Deadline, p.At)
	}
	if p.Digest != BodyDigest(p.Body) {
		return fmt.Errorf("govern: proposal %s digest does not match its body", p.ID)
	}
	return nil
}

// required is how many approvals commit p.
func (p *Proposal) required() int {
	switch p.Rule {
	case Unanimous:
		return len(p.Voters)
	case Majority:
		return len(p.Voters)/2 + 1
	case Any:
		return 1
	}
	return p.N
}

// NewVote casts voter's choice on p, bound to p's digest and policy
// version, at the zero time (CastVote stamps it). It refuses a voter p does
// not name, an unknown choice and an invalid proposal.
func NewVote(p *Proposal, voter string, choice Choice) (Vote, error) {
	if err := p.Validate(); err != nil {
		return Vote{}, err
	}
	if !slices.Contains(p.Voters, voter) {
		return Vote{}, fmt.Errorf("govern: %q is not eligible to vote on proposal %s", voter, p.ID)
	}
	if !choice.valid() {
		return Vote{}, fmt.Errorf("govern: vote choice %q is not allow, block or abstain", choice)
	}
	return Vote{Proposal: p.ID, Digest: p.Digest, PolicyVersion: p.PolicyVersion, Voter: voter, Choice: choice}, nil
}

// Tally folds votes into p's state at now, as the reference's decide does,
// so both SDKs reach the same decision on the same log. A vote counts only
// when it names p's id, digest and policy version, comes from an eligible
// voter, and was cast between the proposal and its deadline and not after
// now. Votes are put in a canonical order (voter, time, choice) first, so
// their order on the log does not matter; a voter's repeated identical vote
// counts once, and two different votes from one voter reject the proposal.
// A mandatory voter who blocks or abstains rejects it. It commits once the
// rule's approvals are reached and every mandatory voter allowed, is
// rejected once the rule can no longer be met, and expires at the deadline.
// It is pure: the same proposal, votes and time give the same result.
func Tally(p *Proposal, votes []Vote, now time.Time) Result {
	res := Result{State: Pending, Required: p.required()}
	if err := p.Validate(); err != nil {
		res.State, res.Reason = Rejected, err.Error()
		return res
	}
	var valid []Vote
	for _, v := range votes {
		if v.Proposal == p.ID && v.Digest == p.Digest && v.PolicyVersion == p.PolicyVersion &&
			slices.Contains(p.Voters, v.Voter) && v.Choice.valid() &&
			!v.At.Before(p.At) && !v.At.After(p.Deadline) && !v.At.After(now) {
			valid = append(valid, v)
		}
	}
	slices.SortFunc(valid, func(a, b Vote) int {
		return cmp.Or(cmp.Compare(a.Voter, b.Voter), a.At.Compare(b.At), cmp.Compare(choiceRank(a.Choice), choiceRank(b.Choice)))
	})
	ballots := map[string]Choice{}
	for _, v := range valid {
		prev, voted := ballots[v.Voter]
		if voted && prev != v.Choice {
			res.State, res.Reason = Rejected, fmt.Sprintf("voter %q voted both %s and %s", v.Voter, prev, v.Choice)
			return res
		}
		if voted {
			continue
		}
		ballots[v.Voter] = v.Choice
		switch v.Choice {
		case VoteAllow:
			res.Approve = append(res.Approve, v.Voter)
		case VoteBlock:
			res.Reject = append(res.Reject, v.Voter)
		default:
			res.Abstain = append(res.Abstain, v.Voter)
		}
	}
	mandatoryMet := true
	for _, m := range p.Mandatory {
		c, voted := ballots[m]
		if voted && c != VoteAllow {
			res.State, res.Reason = Rejected, fmt.Sprintf("mandatory voter %q voted %s", m, c)
			return res
		}
		mandatoryMet = mandatoryMet && voted
	}
	allow, responded := len(res.Approve), len(ballots)
	if allow >= res.Required && mandatoryMet {
		res.State, res.Reason = Committed, "quorum met"
		return res
	}
	// Undecided voters may still allow; abstentions and blocks cannot.
	if allow+len(p.Voters)-responded < res.Required {
		res.State, res.Reason = Rejected, "the quorum can no longer be met"
		return res
	}
	if !now.Before(p.Deadline) {
		res.State, res.Reason = Expired, "quorum not met by the deadline"
		if !mandatoryMet {
			res.Reason = "a mandatory voter did not allow by the deadline"
		}
	}
	return res
}

// choiceRank orders a voter's different choices at one instant.
func choiceRank(c Choice) int {
	switch c {
	case VoteAllow:
		return 0
	case VoteBlock:
		return 1
	}
	return 2
}
