package conversation

import (
	"slices"

	"github.com/lasergo/laser/runtime"
)

// Policy narrows an ordered history to what feeds a model call. Select must
// not modify its argument's elements; it may return a subslice of it.
type Policy interface {
	Select(h History) History
}

// PolicyFunc adapts a function to a Policy.
type PolicyFunc func(History) History

// Select calls f.
func (f PolicyFunc) Select(h History) History { return f(h) }

// LastN keeps the most recent N records (all of them when there are fewer;
// none when N is not positive).
type LastN int

// Select keeps the tail.
func (n LastN) Select(h History) History {
	if n <= 0 {
		return History{}
	}
	return h[len(h)-min(len(h), int(n)):]
}

// ByAgent keeps the records sent by the listed agents (the reference's role
// filter); a record with no sender never matches.
type ByAgent []string

// Select keeps the listed agents' records, in order.
func (a ByAgent) Select(h History) History {
	out := History{}
	for _, m := range h {
		if s := m.Provenance.Agent; s != "" && slices.Contains(a, s) {
			out = append(out, m)
		}
	}
	return out
}

// TokenBudget keeps the most recent records whose estimated tokens fit in
// Max, walking newest first, and always keeps at least the newest record so
// a single oversized one is not silently dropped.
type TokenBudget struct {
	Max int
	// Estimate counts a record's tokens. Default EstimateTokens.
	Estimate func(*runtime.Message) int
}

// EstimateTokens is the default token estimate: about four bytes per token
// of the record's payload, rounded up (the encoded envelope for AGDX).
func EstimateTokens(m *runtime.Message) int { return (len(m.Payload) + 3) / 4 }

// Select keeps the tail that fits the budget.
func (b TokenBudget) Select(h History) History {
	est := b.Estimate
	if est == nil {
		est = EstimateTokens
	}
	total, start := 0, len(h)
	for start > 0 {
		cost := est(h[start-1])
		if start < len(h) && total+cost > b.Max {
			break
		}
		total += cost
		start--
	}
	return h[start:]
}

// Chain applies policies in order, each narrowing the previous result.
type Chain []Policy

// Select applies each policy in turn.
func (c Chain) Select(h History) History {
	for _, p := range c {
		h = p.Select(h)
	}
	return h
}
