package govern

import (
	"fmt"
	"time"
)

// Rule is how votes combine into a decision.
type Rule string

// Rules.
const (
	Unanimous Rule = "unanimous" // every eligible voter approves
	Majority  Rule = "majority"  // more than half of the eligible voters approve
	NOfM      Rule = "n_of_m"    // at least Quorum.N eligible voters approve
)

// Proposal asks the eligible voters to approve one effect. It rides
// TopicProposals as an AGDX event with operation OperationProposal.
type Proposal struct {
	ID       string    `cbor:"id"`
	Proposer string    `cbor:"proposer"`
	Action   Summary   `cbor:"action"`
	Reason   string    `cbor:"reason,omitempty"`
	Rule     Rule      `cbor:"rule"`
	N        int       `cbor:"n,omitempty"`
	Voters   []string  `cbor:"voters"`
	At       time.Time `cbor:"at"`
	Deadline time.Time `cbor:"deadline"`
}

// Vote is one voter's choice on a proposal. It rides TopicProposals as an
// AGDX event with operation OperationVote. Who voted is a claim unless the
// record is signed.
type Vote struct {
	Proposal string    `cbor:"proposal"`
	Voter    string    `cbor:"voter"`
	Approve  bool      `cbor:"approve"`
	At       time.Time `cbor:"at"`
}

// State is where a proposal stands.
type State string

// States.
const (
	Pending   State = "pending"
	Committed State = "committed"
	Rejected  State = "rejected"
	Expired   State = "expired"
)

// Result is a tally: the state, and the eligible votes that decided it.
type Result struct {
	State    State
	Approve  []string // eligible voters who approved, in vote order
	Reject   []string // eligible voters who rejected, in vote order
	Required int      // approvals the rule needs
}

// Validate reports a proposal no vote could ever commit.
func (p *Proposal) Validate() error {
	if p.ID == "" {
		return fmt.Errorf("govern: proposal has no id")
	}
	if len(p.Voters) == 0 {
		return fmt.Errorf("govern: proposal %s has no eligible voters", p.ID)
	}
	seen := map[string]bool{}
	for _, v := range p.Voters {
		if seen[v] {
			return fmt.Errorf("govern: proposal %s names voter %q twice", p.ID, v)
		}
		seen[v] = true
	}
	switch p.Rule {
	case Unanimous, Majority:
	case NOfM:
		if p.N < 1 || p.N > len(p.Voters) {
			return fmt.Errorf("govern: proposal %s needs %d of %d voters", p.ID, p.N, len(p.Voters))
		}
	default:
		return fmt.Errorf("govern: proposal %s has unknown rule %q", p.ID, p.Rule)
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
	}
	return p.N
}

// Tally folds votes into p's state at now: only votes naming p, cast by an
// eligible voter between the proposal and its deadline, count, and only a
// voter's first. It commits once the approvals reach what the rule needs,
// rejects once they no longer can, and expires at the deadline. It is pure:
// the same proposal, votes and time give the same result.
func Tally(p *Proposal, votes []Vote, now time.Time) Result {
	res := Result{State: Pending, Required: p.required()}
	if p.Validate() != nil {
		res.State = Rejected
		return res
	}
	eligible := map[string]bool{}
	for _, v := range p.Voters {
		eligible[v] = true
	}
	voted := map[string]bool{}
	for _, v := range votes {
		if v.Proposal != p.ID || !eligible[v.Voter] || voted[v.Voter] ||
			v.At.Before(p.At) || v.At.After(p.Deadline) || v.At.After(now) {
			continue
		}
		voted[v.Voter] = true
		if v.Approve {
			res.Approve = append(res.Approve, v.Voter)
		} else {
			res.Reject = append(res.Reject, v.Voter)
		}
	}
	switch {
	case len(res.Approve) >= res.Required:
		res.State = Committed
	case len(p.Voters)-len(res.Reject) < res.Required:
		res.State = Rejected
	case !now.Before(p.Deadline):
		res.State = Expired
	}
	return res
}
