package conversation_test

import (
	"slices"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/runtime"
)

// history builds records sent by the given agents at offsets 0, 1, ...,
// each payload size bytes long.
func history(size int, agents ...string) conversation.History {
	h := make(conversation.History, len(agents))
	for i, a := range agents {
		m := &runtime.Message{Payload: make([]byte, size)}
		m.Position.Offset = uint64(i)
		m.Provenance.Agent = a
		h[i] = m
	}
	return h
}

func offsets(h conversation.History) []uint64 {
	out := make([]uint64, len(h))
	for i, m := range h {
		out[i] = m.Position.Offset
	}
	return out
}

func expect(t *testing.T, got conversation.History, want ...uint64) {
	t.Helper()
	if o := offsets(got); !slices.Equal(o, want) && !(len(o) == 0 && len(want) == 0) {
		t.Fatalf("kept offsets %v, want %v", o, want)
	}
}

func TestLastNKeepsTheMostRecentTail(t *testing.T) {
	h := history(1, "a", "b", "c", "d")
	expect(t, conversation.LastN(2).Select(h), 2, 3)
	expect(t, conversation.LastN(10).Select(h), 0, 1, 2, 3)
	expect(t, conversation.LastN(0).Select(h))
}

func TestDefaultPolicyIsLastFifty(t *testing.T) {
	if conversation.DefaultPolicy != conversation.LastN(50) {
		t.Fatalf("default policy %v", conversation.DefaultPolicy)
	}
}

func TestByAgentKeepsOnlyTheListedSenders(t *testing.T) {
	h := history(1, "planner", "executor", "", "planner", "critic")
	expect(t, conversation.ByAgent{"planner", "critic"}.Select(h), 0, 3, 4)
	expect(t, conversation.ByAgent{}.Select(h))
}

func TestTokenBudgetKeepsTheRecentTailThatFits(t *testing.T) {
	h := history(400, "a", "a", "a", "a", "a") // 100 tokens each
	expect(t, conversation.TokenBudget{Max: 250}.Select(h), 3, 4)
	expect(t, conversation.TokenBudget{Max: 300}.Select(h), 2, 3, 4)
}

func TestTokenBudgetAlwaysKeepsAtLeastOneRecord(t *testing.T) {
	h := history(4000, "a", "a") // 1000 tokens each
	expect(t, conversation.TokenBudget{Max: 10}.Select(h), 1)
	expect(t, conversation.TokenBudget{Max: 0}.Select(history(1)))
}

func TestTokenBudgetEstimatesFourBytesPerTokenRoundedUp(t *testing.T) {
	for size, want := range map[int]int{0: 0, 1: 1, 4: 1, 5: 2, 400: 100} {
		if got := conversation.EstimateTokens(&runtime.Message{Payload: make([]byte, size)}); got != want {
			t.Errorf("EstimateTokens(%d bytes) = %d, want %d", size, got, want)
		}
	}
	custom := conversation.TokenBudget{Max: 2, Estimate: func(*runtime.Message) int { return 1 }}
	expect(t, custom.Select(history(4000, "a", "a", "a")), 1, 2)
}

func TestChainAppliesPoliciesInOrder(t *testing.T) {
	h := history(1, "planner", "executor", "planner", "executor")
	expect(t, conversation.Chain{conversation.ByAgent{"planner"}, conversation.LastN(1)}.Select(h), 2)
	expect(t, conversation.Chain{conversation.LastN(1), conversation.ByAgent{"planner"}}.Select(h))
}
