package govern

import (
	"cmp"
	"slices"
)

// AgentActivity is one agent's decisions, folded from evidence: a
// supervisor's view of what the agent has been doing.
type AgentActivity struct {
	Agent     string          `json:"agent"`
	Decisions int             `json:"decisions"`
	ByVerdict map[Verdict]int `json:"by_verdict"`
	Latest    *Evidence       `json:"latest"`
}

// Activity folds evidence into per-agent activity, busiest agent first
// (ties by name). A record seen twice (a replay) counts once; the latest
// decision is the one with the greatest time, ties broken by chain and seq.
// Records of actions without an agent fold under "".
func Activity(evs []*Evidence) []AgentActivity {
	seen := map[string]bool{}
	by := map[string]*AgentActivity{}
	for _, ev := range evs {
		if ev == nil || seen[ev.Producer+"/"+ev.Hash] {
			continue
		}
		seen[ev.Producer+"/"+ev.Hash] = true
		a := by[ev.Action.Agent]
		if a == nil {
			a = &AgentActivity{Agent: ev.Action.Agent, ByVerdict: map[Verdict]int{}}
			by[ev.Action.Agent] = a
		}
		a.Decisions++
		a.ByVerdict[ev.Verdict]++
		if a.Latest == nil || later(ev, a.Latest) {
			a.Latest = ev
		}
	}
	out := make([]AgentActivity, 0, len(by))
	for _, a := range by {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(x, y AgentActivity) int {
		return cmp.Or(cmp.Compare(y.Decisions, x.Decisions), cmp.Compare(x.Agent, y.Agent))
	})
	return out
}

// later reports whether a was decided after b.
func later(a, b *Evidence) bool {
	if !a.At.Equal(b.At) {
		return a.At.After(b.At)
	}
	return cmp.Or(cmp.Compare(a.Producer, b.Producer), cmp.Compare(a.Seq, b.Seq)) > 0
}
