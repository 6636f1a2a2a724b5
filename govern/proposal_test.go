package govern_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lasergo/laser/govern"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func proposal(rule govern.Rule, n int) *govern.Proposal {
	return &govern.Proposal{ID: "p1", Rule: rule, N: n, Voters: []string{"ann", "bob", "cy"}, At: t0, Deadline: t0.Add(time.Hour)}
}

func vote(voter string, yes bool) govern.Vote {
	return govern.Vote{Proposal: "p1", Voter: voter, Approve: yes, At: t0.Add(time.Minute)}
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
		{"a voter's first vote stands", proposal(govern.NOfM, 1), []govern.Vote{vote("ann", false), vote("ann", true)}, now, govern.Pending},
		{"votes for another proposal do not count", proposal(govern.NOfM, 1), []govern.Vote{{Proposal: "p2", Voter: "ann", Approve: true, At: t0.Add(time.Minute)}}, now, govern.Pending},
		{"votes after the deadline do not count", proposal(govern.NOfM, 1), []govern.Vote{{Proposal: "p1", Voter: "ann", Approve: true, At: t0.Add(2 * time.Hour)}}, t0.Add(3 * time.Hour), govern.Expired},
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
