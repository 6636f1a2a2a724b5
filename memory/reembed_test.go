package memory_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/statestore"
)

// countingEmbedder is HashEmbedder counting its calls and texts. When
// blocks says so for a call, it reports the call on entered and waits for
// release to close.
type countingEmbedder struct {
	calls, texts atomic.Int64
	blocks       func(texts []string) bool
	entered      chan struct{}
	release      chan struct{}
	// failItems fails every call for the peer's items.
	failItems atomic.Bool
}

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.failItems.Load() && strings.HasPrefix(texts[0], "ticket") {
		return nil, errors.New("model unavailable")
	}
	e.calls.Add(1)
	e.texts.Add(int64(len(texts)))
	if e.blocks != nil && e.blocks(texts) {
		e.entered <- struct{}{}
		<-e.release
	}
	return memory.HashEmbedder{}.Embed(ctx, texts)
}

// floodBody is the body of the peer's i-th item: "ticket<i>" is a term
// only that item has.
func floodBody(i int) string { return fmt.Sprintf("ticket%d about the billing export", i) }

// peerFlood has the enrolled peer "support" remember n items under a model
// this test's Stores do not use, oldest first, and returns their scope.
func peerFlood(t *testing.T, w *signedWorld, n int) memory.Scope {
	t.Helper()
	peer := memory.New(w.client, memory.Config{Key: w.support, Agent: "support", Model: "peer-model"})
	scope := memory.Scope{Conversation: conversation.Derive("flood")}
	for i := range n {
		remember(t, peer, scope, floodBody(i))
	}
	return scope
}

// ours is a Store of the model "ours" over the verifying client, signing
// as the other enrolled agent.
func ours(w *signedWorld, emb memory.Embedder, bound int) *memory.Store {
	return memory.New(w.client, memory.Config{
		Embedder: emb, Model: "ours", Dims: memory.HashDims, ReembedPerRecall: bound,
		Key: w.mallory, Agent: "mallory",
	})
}

var semanticQ = memory.Query{Text: "billing export", Strategy: memory.Semantic, Limit: 1000}

// TestOpeningAStoreOverAPeersFloodEmbedsNothing: a fresh Store folds an
// enrolled peer's items of another model, and reads them by recency, by
// keyword and by name, without one embedder call.
func TestOpeningAStoreOverAPeersFloodEmbedsNothing(t *testing.T) {
	w := newSignedWorld(t)
	scope := peerFlood(t, w, 300)
	emb := &countingEmbedder{}
	mem := ours(w, emb, 0)
	if _, _, err := mem.Named(t.Context(), "anything"); err != nil {
		t.Fatal(err)
	}
	if got := recallQ(t, mem, scope, memory.Query{Strategy: memory.Recent, Limit: 1000}); len(got) != 300 {
		t.Fatalf("recent recall found %d items, want 300", len(got))
	}
	if got := bodies(recallQ(t, mem, scope, memory.Query{Text: "ticket7", Strategy: memory.Keyword, Limit: 1})); !slices.Equal(got, []string{floodBody(7)}) {
		t.Fatalf("keyword recall %q", got)
	}
	if n := emb.calls.Load(); n != 0 {
		t.Fatalf("opening and reading a Store called the embedder %d times, want 0", n)
	}
	if n := mem.Awaiting(); n != 300 {
		t.Fatalf("Awaiting = %d, want the 300 items of the other model", n)
	}
}

// TestARecallReembedsAtMostTheBound: each semantic recall embeds at most
// ReembedPerRecall of the peer's items, newest first, and never the same
// one twice; meanwhile hybrid recall finds the others by keyword and
// semantic recall leaves them out.
func TestARecallReembedsAtMostTheBound(t *testing.T) {
	w := newSignedWorld(t)
	scope := peerFlood(t, w, 300)
	emb := &countingEmbedder{}
	mem := ours(w, emb, 100)

	items := recallQ(t, mem, scope, semanticQ)
	if n := emb.texts.Load(); n != 1+100 {
		t.Fatalf("the first recall embedded %d texts, want the query and 100 items", n)
	}
	if len(items) != 100 || mem.Awaiting() != 200 {
		t.Fatalf("semantic recall returned %d items with %d awaiting, want the 100 embedded and 200 awaiting", len(items), mem.Awaiting())
	}
	for _, it := range items {
		var i int
		if _, err := fmt.Sscanf(string(it.Body), "ticket%d", &i); err != nil || i < 200 {
			t.Fatalf("the first recall embedded %q, want the newest 100 (ticket200 to ticket299)", it.Body)
		}
	}
	hybrid := recallQ(t, mem, scope, memory.Query{Text: "ticket3", Strategy: memory.Hybrid, Limit: 5})
	found := slices.IndexFunc(hybrid, func(it memory.Item) bool { return string(it.Body) == floodBody(3) })
	if found < 0 || len(hybrid[found].Signals) != 1 || hybrid[found].Signals[0].Strategy != memory.Keyword {
		t.Fatalf("hybrid recall of an item awaiting its vector %q, want it found by keyword alone", bodies(hybrid))
	}
	if n := emb.texts.Load(); n != 1+100+1+100 {
		t.Fatalf("after the hybrid recall %d texts embedded, want 100 more items and its query", n)
	}
	recallQ(t, mem, scope, semanticQ)
	recallQ(t, mem, scope, semanticQ)
	if n, left := emb.texts.Load(), mem.Awaiting(); n != 4+300 || left != 0 {
		t.Fatalf("four recalls embedded %d texts and left %d awaiting, want each item once and 4 queries", n, left)
	}
}

// TestRecallEmbedsWithoutHoldingTheStoresLock: while a recall's embedder
// call for the peer's items is blocked, the same Store remembers, recalls
// (a second semantic recall too, which leaves the items being embedded to
// the first) and reads named state.
func TestRecallEmbedsWithoutHoldingTheStoresLock(t *testing.T) {
	w := newSignedWorld(t)
	scope := peerFlood(t, w, 50)
	emb := &countingEmbedder{
		blocks:  func(texts []string) bool { return strings.HasPrefix(texts[0], "ticket") },
		entered: make(chan struct{}, 1),
		release: make(chan struct{}),
	}
	mem := ours(w, emb, 0)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(emb.release) }) }
	t.Cleanup(release) // a failed test does not leave the recall blocked
	type result struct {
		items []memory.Item
		err   error
	}
	first := make(chan result, 1)
	go func() {
		items, err := mem.Recall(t.Context(), scope, semanticQ)
		first <- result{items, err}
	}()
	<-emb.entered

	others := make(chan error, 1)
	go func() {
		others <- func() error {
			if _, err := mem.Remember(t.Context(), scope, memory.Fact, []byte("fresh note")); err != nil {
				return err
			}
			if got, err := mem.Recall(t.Context(), scope, memory.Query{Strategy: memory.Recent, Limit: 1}); err != nil || len(got) != 1 || string(got[0].Body) != "fresh note" {
				return fmt.Errorf("recent recall during the embedder call: %q, %v", bodies(got), err)
			}
			if got, err := mem.Recall(t.Context(), scope, memory.Query{Text: "fresh note", Strategy: memory.Semantic, Limit: 1000}); err != nil || len(got) != 1 {
				return fmt.Errorf("semantic recall during the embedder call: %q, %v; want only the fresh note, the peer's items being embedded by the first", bodies(got), err)
			}
			_, _, err := mem.Named(t.Context(), "k")
			return err
		}()
	}()
	select {
	case err := <-others:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a watchdog: without it a held lock deadlocks the test
		t.Fatal("Remember and Recall did not complete while a recall's embedder call was blocked: the lock is held across it")
	}
	release()
	res := <-first
	if res.err != nil {
		t.Fatal(res.err)
	}
	// It ranks what the Store holds once its vectors are in: the peer's
	// items and the note remembered meanwhile.
	if len(res.items) != 51 || mem.Awaiting() != 0 {
		t.Fatalf("the blocked recall returned %d items with %d awaiting, want the 50 of the peer and the fresh note", len(res.items), mem.Awaiting())
	}
	if n := emb.texts.Load(); n != 50+1+2 {
		t.Fatalf("%d texts embedded, want the 50 items once, the fresh note and 2 queries", n)
	}
}

// TestASecondStoreReadsTheReembeddedVectorsFromTheCache: vectors the first
// Store embedded again, over recalls within the bound, are kept in a file
// cache; a second Store over the same directory takes every one back in
// its first recall without calling the model, past the bound.
func TestASecondStoreReadsTheReembeddedVectorsFromTheCache(t *testing.T) {
	w := newSignedWorld(t)
	scope := peerFlood(t, w, 120)
	dir := filepath.Join(t.TempDir(), "vectors")
	emb := &countingEmbedder{}
	open := func() *memory.Store {
		cache, err := statestore.OpenFile(dir, statestore.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		cached, err := memory.NewCachedEmbedder(emb, "ours", cache, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ours(w, cached, 40)
	}
	first := open()
	for range 3 {
		recallQ(t, first, scope, semanticQ)
	}
	if n, left := emb.texts.Load(), first.Awaiting(); n != 1+120 || left != 0 {
		t.Fatalf("the first Store embedded %d texts in 3 recalls, %d left, want the query once and each item once", n, left)
	}
	emb.texts.Store(0)
	second := open()
	items := recallQ(t, second, scope, semanticQ)
	if n := emb.texts.Load(); n != 0 {
		t.Fatalf("the second Store embedded %d texts, want none (all cached)", n)
	}
	if len(items) != 120 || second.Awaiting() != 0 {
		t.Fatalf("the second Store's first recall returned %d items, %d awaiting; want all 120 from the cache", len(items), second.Awaiting())
	}
}

// TestAFailedReembedLeavesTheItemsForTheNextRecall: an embedder that fails
// on the peer's items fails that recall and leaves the items awaiting; the
// next recall embeds them.
func TestAFailedReembedLeavesTheItemsForTheNextRecall(t *testing.T) {
	w := newSignedWorld(t)
	scope := peerFlood(t, w, 30)
	emb := &countingEmbedder{}
	mem := ours(w, emb, 0)
	emb.failItems.Store(true)
	if _, err := mem.Recall(t.Context(), scope, semanticQ); err == nil || !strings.Contains(err.Error(), "model unavailable") {
		t.Fatalf("a recall whose re-embedding failed: %v", err)
	}
	if n := mem.Awaiting(); n != 30 {
		t.Fatalf("%d items awaiting after the failure, want all 30", n)
	}
	emb.failItems.Store(false)
	if items := recallQ(t, mem, scope, semanticQ); len(items) != 30 || mem.Awaiting() != 0 {
		t.Fatalf("the next recall returned %d items with %d awaiting, want all 30 embedded", len(items), mem.Awaiting())
	}
}

// panicOnceEmbedder panics on its first call for the peer's items, then
// embeds as HashEmbedder does.
type panicOnceEmbedder struct{ panicked atomic.Bool }

func (e *panicOnceEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if strings.HasPrefix(texts[0], "ticket") && e.panicked.CompareAndSwap(false, true) {
		panic("embedder bug")
	}
	return memory.HashEmbedder{}.Embed(ctx, texts)
}

// TestAPanickingReembedLeavesTheItemsForTheNextRecall: an embedder that
// panics (the caller recovers) does not leave the items it was given
// marked as being embedded, so the next recall embeds them.
func TestAPanickingReembedLeavesTheItemsForTheNextRecall(t *testing.T) {
	w := newSignedWorld(t)
	scope := peerFlood(t, w, 30)
	emb := &panicOnceEmbedder{}
	mem := ours(w, emb, 0)
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("the embedder's panic did not reach the caller")
			}
		}()
		_, _ = mem.Recall(t.Context(), scope, semanticQ)
	}()
	if items := recallQ(t, mem, scope, semanticQ); len(items) != 30 || mem.Awaiting() != 0 {
		t.Fatalf("the recall after the panic returned %d items with %d awaiting, want all 30 embedded", len(items), mem.Awaiting())
	}
}
