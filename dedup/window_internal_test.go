package dedup

import (
	"testing"
)

// TestSlidingWindowMarksTheScopedKeyByHash pins that the consumer's fast
// path (a hash of agent, separator and key written in parts) marks the same
// entry as the public API given Key: a key marked one way is a
// duplicate the other way, and forgetting it either way frees it.
func TestSlidingWindowMarksTheScopedKeyByHash(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct{ agent, key string }{{"shop", "order-7"}, {"", "order-7"}, {"a", "\x1fb"}, {"a\x1fb", "c"}} {
		w := NewSlidingWindow(4)
		if !markFresh(w, tc.agent, tc.key) {
			t.Fatalf("%q/%q: first sight reported a duplicate", tc.agent, tc.key)
		}
		if fresh, _ := w.Observe(ctx, Key(tc.agent, tc.key)); fresh {
			t.Fatalf("%q/%q: the scoped key was not marked by the fast path", tc.agent, tc.key)
		}
		_ = w.Forget(ctx, Key(tc.agent, tc.key))
		if !markFresh(w, tc.agent, tc.key) {
			t.Fatalf("%q/%q: Forget of the scoped key did not free the fast path's mark", tc.agent, tc.key)
		}
	}
	// Scoping still separates agents: the same key from another sender is fresh.
	w := NewSlidingWindow(4)
	markFresh(w, "shop", "k")
	if !markFresh(w, "billing", "k") || !markFresh(w, "", "k") {
		t.Fatal("a key from another agent, or from no agent, was taken for a duplicate")
	}
}

// markFresh reports whether Mark found the scoped key new.
func markFresh(w *SlidingWindow, sender, key string) bool {
	_, fresh := w.Mark(sender, key)
	return fresh
}

// TestSlidingWindowUnmarkFreesTheKey: the hash Mark returns, given to
// Unmark, makes the scoped key unseen again, by either path.
func TestSlidingWindowUnmarkFreesTheKey(t *testing.T) {
	w := NewSlidingWindow(4)
	h, fresh := w.Mark("shop", "order-7")
	if !fresh {
		t.Fatal("first sight reported a duplicate")
	}
	w.Unmark(h)
	if w.Len() != 0 {
		t.Fatalf("Len = %d after Unmark, want 0", w.Len())
	}
	if fresh, _ := w.Observe(t.Context(), Key("shop", "order-7")); !fresh {
		t.Fatal("the key Unmark freed was taken for a duplicate")
	}
}
