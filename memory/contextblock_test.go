package memory_test

import (
	"math"
	"strings"
	"testing"

	"github.com/lasergo/laser/memory"
)

func items(bodies ...string) []memory.Item {
	out := make([]memory.Item, len(bodies))
	for i, b := range bodies {
		out[i].Body = []byte(b)
	}
	return out
}

func TestContextBlockRendersEveryItemWithoutABudget(t *testing.T) {
	if got := memory.ContextBlock(items("one", "two"), 0, nil); got != "one\n\ntwo" {
		t.Fatalf("block %q", got)
	}
}

func TestContextBlockStopsAtTheBudgetAndSaysHowManyItOmitted(t *testing.T) {
	// 20 bytes estimate as 5 tokens each: a budget of 6 holds one.
	got := memory.ContextBlock(items("first twenty bytes!!", "second twenty bytes!", "third"), 6, nil)
	if got != "first twenty bytes!!\n\n[... 2 more recalled item(s) omitted ...]" {
		t.Fatalf("block %q", got)
	}
}

func TestContextBlockKeepsTheFirstItemOverBudget(t *testing.T) {
	if got := memory.ContextBlock(items("a much longer single memory item"), 1, nil); got != "a much longer single memory item" {
		t.Fatalf("block %q", got)
	}
}

func TestContextBlockCountsWithTheGivenCounter(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	got := memory.ContextBlock(items("a b", "c d", "e f"), 4, words)
	if got != "a b\n\nc d\n\n[... 1 more recalled item(s) omitted ...]" {
		t.Fatalf("block %q", got)
	}
}

func TestContextBlockReplacesInvalidUTF8(t *testing.T) {
	if got := memory.ContextBlock(items("ok \xff"), 0, nil); got != "ok \uFFFD" {
		t.Fatalf("block %q", got)
	}
}

func TestEstimateTokensRoundsUp(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2} {
		if got := memory.EstimateTokens(s); got != want {
			t.Fatalf("EstimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestHashEmbedderIsDeterministicNormalizedAndSpellingAware(t *testing.T) {
	vecs, err := memory.HashEmbedder{}.Embed(t.Context(), []string{"checkout latency", "checkout latency", "Checkout latencies", "the customer prefers email", ""})
	if err != nil {
		t.Fatal(err)
	}
	cos := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	for i, v := range vecs[:4] {
		if len(v) != memory.HashDims || math.Abs(cos(v, v)-1) > 1e-5 {
			t.Fatalf("vector %d: %d dims, norm² %v", i, len(v), cos(v, v))
		}
	}
	if cos(vecs[0], vecs[1]) < 0.9999 {
		t.Fatal("the same text embeds differently")
	}
	if near, far := cos(vecs[0], vecs[2]), cos(vecs[0], vecs[3]); near < 0.5 || far > 0.3 {
		t.Fatalf("similar spelling %.2f, unrelated %.2f", near, far)
	}
	if cos(vecs[4], vecs[4]) != 0 {
		t.Fatal("an empty text has a non-zero vector")
	}
}
