package runtime

import (
	"context"
	"testing"
)

// TestSlidingWindowMarksTheScopedKeyByHash pins that the consumer's fast
// path (a hash of agent, separator and key written in parts) marks the same
// entry as the public API given DedupKey: a key marked one way is a
// duplicate the other way, and forgetting it either way frees it.
func TestSlidingWindowMarksTheScopedKeyByHash(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ agent, key string }{{"shop", "order-7"}, {"", "order-7"}, {"a", "\x1fb"}, {"a\x1fb", "c"}} {
		w := NewSlidingWindow(4)
		if !w.observeHash(w.scopedHash(tc.agent, tc.key)) {
			t.Fatalf("%q/%q: first sight reported a duplicate", tc.agent, tc.key)
		}
		if fresh, _ := w.Observe(ctx, DedupKey(tc.agent, tc.key)); fresh {
			t.Fatalf("%q/%q: the scoped key was not marked by the fast path", tc.agent, tc.key)
		}
		_ = w.Forget(ctx, DedupKey(tc.agent, tc.key))
		if !w.observeHash(w.scopedHash(tc.agent, tc.key)) {
			t.Fatalf("%q/%q: Forget of the scoped key did not free the fast path's mark", tc.agent, tc.key)
		}
	}
	// Scoping still separates agents: the same key from another sender is fresh.
	w := NewSlidingWindow(4)
	w.observeHash(w.scopedHash("shop", "k"))
	if !w.observeHash(w.scopedHash("billing", "k")) || !w.observeHash(w.scopedHash("", "k")) {
		t.Fatal("a key from another agent, or from no agent, was taken for a duplicate")
	}
}
