package memory_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/figures"
	"github.com/lasergo/laser/internal/heapprobe"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// freshAndWriter are the Stores a test checks: the one that wrote (folding
// incrementally) and a fresh one folding the whole topic.
func freshAndWriter(w *signedWorld, writer *memory.Store, opts memory.Config) map[string]*memory.Store {
	return map[string]*memory.Store{"the writing Store": writer, "a fresh Store": memory.New(w.client, opts)}
}

// Issue 34, memory item 1: without Writers, a peer with its own enrolled
// key forgot and down-ranked support's item.
func TestAPeerCannotForgetOrDownRankAnItemItDidNotWrite(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	support := memory.New(w.client, memory.Config{Key: w.support, Agent: "support"})
	mallory := memory.New(w.client, memory.Config{Key: w.mallory, Agent: "mallory"})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	id := remember(t, support, scope, "refunds above 500 need a manager")
	recallQ(t, mallory, scope, memory.Query{}) // mallory has seen the item
	if _, err := mallory.Feedback(ctx, scope, id, -100); err != nil {
		t.Fatal(err)
	}
	if err := mallory.Forget(ctx, scope, id); err != nil {
		t.Fatal(err)
	}
	for name, m := range freshAndWriter(w, support, memory.Config{}) {
		items := recallQ(t, m, scope, memory.Query{})
		if len(items) != 1 || items[0].ID != id || items[0].Feedback != 0 {
			t.Fatalf("%s recalls %+v: mallory's forget or feedback applied to support's item", name, items)
		}
		if m.Refused() != 2 {
			t.Fatalf("%s refused %d records, want mallory's forget and feedback", name, m.Refused())
		}
	}
}

func TestTheAuthorForgetsAndReweightsItsOwnItem(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	support := memory.New(w.client, memory.Config{Key: w.support, Agent: "support"})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	keep := remember(t, support, scope, "keep")
	drop := remember(t, support, scope, "drop")
	recallQ(t, support, scope, memory.Query{})
	if _, err := support.Feedback(ctx, scope, keep, 3); err != nil {
		t.Fatal(err)
	}
	if err := support.Forget(ctx, scope, drop); err != nil {
		t.Fatal(err)
	}
	for name, m := range freshAndWriter(w, support, memory.Config{}) {
		items := recallQ(t, m, scope, memory.Query{})
		if len(items) != 1 || items[0].ID != keep || items[0].Feedback != 3 {
			t.Fatalf("%s recalls %+v, want only keep with feedback 3", name, items)
		}
	}
}

func TestAModeratorMayForgetAndReweightItemsItDidNotWrite(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	support := memory.New(w.client, memory.Config{Key: w.support, Agent: "support", Moderators: []string{"mallory"}})
	mallory := memory.New(w.client, memory.Config{Key: w.mallory, Agent: "mallory"})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	keep := remember(t, support, scope, "keep")
	drop := remember(t, support, scope, "drop")
	recallQ(t, support, scope, memory.Query{})
	if _, err := mallory.Feedback(ctx, scope, keep, 2); err != nil {
		t.Fatal(err)
	}
	if err := mallory.Forget(ctx, scope, drop); err != nil {
		t.Fatal(err)
	}
	for name, m := range freshAndWriter(w, support, memory.Config{Moderators: []string{"mallory"}}) {
		items := recallQ(t, m, scope, memory.Query{})
		if len(items) != 1 || items[0].ID != keep || items[0].Feedback != 2 {
			t.Fatalf("%s recalls %+v, want only keep with the moderator's feedback 2", name, items)
		}
	}
}

// Issue 34, memory item 1: any enrolled peer overwrote or forgot a named
// key support wrote first.
func TestAPeerCannotOverwriteOrForgetANamedKeyAnotherWroteFirst(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	support := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.support, Agent: "support"})
	mallory := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.mallory, Agent: "mallory"})
	if err := support.SetNamed(ctx, "refund_limit", []byte("500")); err != nil {
		t.Fatal(err)
	}
	if err := mallory.SetNamed(ctx, "refund_limit", []byte("1000000")); !errors.Is(err, memory.ErrHeld) {
		t.Fatalf("mallory's SetNamed of support's key: err = %v, want ErrHeld", err)
	}
	if err := mallory.ForgetNamed(ctx, "refund_limit"); !errors.Is(err, memory.ErrHeld) {
		t.Fatalf("mallory's ForgetNamed of support's key: err = %v, want ErrHeld", err)
	}
	// A Store that checks nothing still appends mallory's signed writes.
	blind := memory.New(w.anybody, memory.Config{Namespace: "billing", Key: w.mallory, Agent: "mallory"})
	if err := blind.SetNamed(ctx, "refund_limit", []byte("1000000")); err != nil {
		t.Fatal(err)
	}
	if err := blind.ForgetNamed(ctx, "refund_limit"); err != nil {
		t.Fatal(err)
	}
	for name, m := range freshAndWriter(w, support, memory.Config{Namespace: "billing"}) {
		if v, ok := namedValue(t, m, "refund_limit"); !ok || v != "500" {
			t.Fatalf("%s reads refund_limit %q (%v), want support's 500", name, v, ok)
		}
	}
	if v, ok := namedValue(t, mallory, "refund_limit"); !ok || v != "500" {
		t.Fatalf("mallory's own Store reads refund_limit %q (%v), want support's 500", v, ok)
	}
	// The owner still writes it.
	if err := support.SetNamed(ctx, "refund_limit", []byte("700")); err != nil {
		t.Fatal(err)
	}
	if v, _ := namedValue(t, memory.New(w.client, memory.Config{Namespace: "billing"}), "refund_limit"); v != "700" {
		t.Fatalf("a fresh Store reads refund_limit %q after the owner's write, want 700", v)
	}
}

func TestWritersMayAllWriteEveryNamedKey(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	writers := []string{"support", "mallory"}
	support := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.support, Agent: "support", Writers: writers})
	mallory := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.mallory, Agent: "mallory", Writers: writers})
	if err := support.SetNamed(ctx, "refund_limit", []byte("500")); err != nil {
		t.Fatal(err)
	}
	if err := mallory.SetNamed(ctx, "refund_limit", []byte("600")); err != nil {
		t.Fatal(err)
	}
	if v, _ := namedValue(t, memory.New(w.client, memory.Config{Namespace: "billing", Writers: writers}), "refund_limit"); v != "600" {
		t.Fatalf("refund_limit %q, want the listed writer mallory's 600", v)
	}
}

// Issue 34, memory item 2: a content id is predictable, so a forget of it
// appended before the item kept the later Dedup remember forgotten.
func TestAPreForgetDoesNotHideALaterDedupRemember(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	support := memory.New(w.client, memory.Config{Key: w.support, Agent: "support"})
	mallory := memory.New(w.client, memory.Config{Key: w.mallory, Agent: "mallory"})
	scope := memory.Scope{Conversation: conversation.Derive("ada"), Agent: "support"}
	fact := "refunds above 500 need a manager"
	if err := mallory.Forget(ctx, scope, memory.ContentID("", "support", memory.Fact, []byte(fact))); err != nil {
		t.Fatal(err)
	}
	id := remember(t, support, scope, fact, memory.Dedup())
	for name, m := range freshAndWriter(w, support, memory.Config{}) {
		if items := recallQ(t, m, scope, memory.Query{}); len(items) != 1 || items[0].ID != id {
			t.Fatalf("%s recalls %q: the pre-forget hid the item", name, bodies(items))
		}
	}
}

// Issue 34, memory item 2: a peer remembered the fact first under the same
// content id, and support's Dedup remember returned the peer's item.
func TestADedupRememberOfAnIDAnotherAuthorHoldsIsNotSwallowed(t *testing.T) {
	w := newSignedWorld(t)
	support := memory.New(w.client, memory.Config{Key: w.support, Agent: "support"})
	mallory := memory.New(w.client, memory.Config{Key: w.mallory, Agent: "mallory"})
	scope := memory.Scope{Conversation: conversation.Derive("ada"), Agent: "support"}
	fact := "refunds above 500 need a manager"
	remember(t, mallory, scope, fact, memory.Dedup())
	recallQ(t, support, scope, memory.Query{})
	_, err := support.Remember(t.Context(), scope, memory.Fact, []byte(fact), memory.Dedup())
	if !errors.Is(err, memory.ErrHeld) {
		t.Fatalf("Dedup remember of an id mallory holds: err = %v, want ErrIDHeld", err)
	}
	// Its own item, remembered again, still deduplicates.
	own := remember(t, support, scope, "support's own fact", memory.Dedup())
	recallQ(t, support, scope, memory.Query{})
	if again := remember(t, support, scope, "support's own fact", memory.Dedup()); again != own {
		t.Fatalf("support's own fact remembered again got id %s, want %s", again, own)
	}
}

// Issue 34, memory item 3: past MaxItems the oldest item leaves the view,
// and re-appending its captured signed record brought it back.
func TestAReplayedRecordOfAnEvictedItemDoesNotReturn(t *testing.T) {
	w := newSignedWorld(t)
	opts := memory.Config{Key: w.support, Agent: "support", MaxItems: 2}
	support := memory.New(w.client, opts)
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	remember(t, support, scope, "old")
	recallQ(t, support, scope, memory.Query{})
	remember(t, support, scope, "newer")
	remember(t, support, scope, "newest")
	if got := bodies(recallQ(t, support, scope, memory.Query{})); !slices.Equal(got, []string{"newest", "newer"}) {
		t.Fatalf("before the replay recalled %q", got)
	}
	replayAll(t, w, support.Topic(), scope.Conversation, 2) // the old item and its vector
	for name, m := range freshAndWriter(w, support, memory.Config{MaxItems: 2}) {
		if got := bodies(recallQ(t, m, scope, memory.Query{})); !slices.Equal(got, []string{"newest", "newer"}) {
			t.Fatalf("%s recalls %q after a replay of the evicted item's records", name, got)
		}
		if m.Refused() < 2 {
			t.Fatalf("%s refused %d records, want at least the replayed item and vector", name, m.Refused())
		}
	}
}

// Issue 34, memory item 4: tombstones, feedback for never-seen ids and the
// applied feedback keys grew without bound (1M forgets and 1M feedbacks:
// +162 MiB with MaxItems 10).
func TestAFloodOfForgetsAndFeedbackHoldsABoundedHeap(t *testing.T) {
	ctx := t.Context()
	n := 20_000
	if figures.Full() {
		n = 1_000_000
	}
	probe := heapprobe.Wrap(embedlog.New("shop", embedlog.Config{}))
	client := runtime.NewClient(probe, runtime.ClientConfig{})
	if err := client.Bootstrap(ctx, 4); err != nil {
		t.Fatal(err)
	}
	flood := memory.New(client, memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	real := remember(t, flood, scope, "real")
	for i := range n {
		id := wire.IDFromUint128(7, uint64(i)+1)
		if err := flood.Forget(ctx, scope, id); err != nil {
			t.Fatal(err)
		}
		if _, err := flood.Feedback(ctx, scope, id, 1); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 { // and feedback of the real item, each record counted once
			if _, err := flood.Feedback(ctx, scope, real, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	mem := memory.New(client, memory.Config{MaxItems: 10})
	probe.Reset()
	items := recallQ(t, mem, scope, memory.Query{})
	probe.Sample()
	held := probe.Held()
	t.Logf("folding %d forgets and %d feedbacks of unseen ids held %d KiB", n, n, held>>10)
	if len(items) != 1 || items[0].ID != real || items[0].Feedback != float32(n/4) {
		t.Fatalf("recalled %+v, want the real item with feedback %d", items, n/4)
	}
	if limit := uint64(1 << 20); held > limit {
		t.Fatalf("the fold held %d KiB, want under %d KiB", held>>10, limit>>10)
	}
}

// replayAll re-appends, through a client with no key, the first n records
// of every partition (captured, validly signed records) keyed by conv.
func replayAll(t *testing.T, w *signedWorld, topic string, conv wire.ID, n int) {
	t.Helper()
	ctx := t.Context()
	parts, err := w.tr.Partitions(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for p := range parts {
		recs, err := w.tr.ReadRange(ctx, topic, p, 0, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if _, err := w.anybody.Publish(ctx, topic, runtime.Outgoing{Key: wire.PartitionKey(conv), Headers: r.Headers.Decode(), Payload: r.Payload}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A signed memory record bound no destination: copied to another topic
// where a Store reads the same namespace, it folded there.
func TestASignedMemoryRecordCopiedToAnotherTopicIsRefused(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	support := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.support, Agent: "support"})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	remember(t, support, scope, "refunds above 500 need a manager")
	if err := w.tr.EnsureTopics(ctx, 1, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	parts, err := w.tr.Partitions(ctx, support.Topic())
	if err != nil {
		t.Fatal(err)
	}
	for p := range parts {
		recs, err := w.tr.ReadRange(ctx, support.Topic(), p, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if _, err := w.anybody.Publish(ctx, "elsewhere", runtime.Outgoing{Headers: r.Headers.Decode(), Payload: r.Payload}); err != nil {
				t.Fatal(err)
			}
		}
	}
	other := memory.New(w.client, memory.Config{Topic: "elsewhere", Namespace: "billing"})
	if items := recallQ(t, other, scope, memory.Query{}); len(items) != 0 || other.Refused() != 2 {
		t.Fatalf("a Store on another topic recalls %q and refused %d, want nothing and the item and vector refused", bodies(items), other.Refused())
	}
}

func TestAFloodOfNewNamedKeysIsBoundedPerWriter(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	opts := memory.Config{Namespace: "billing", MaxNamedKeys: 3}
	support := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.support, Agent: "support", MaxNamedKeys: 3})
	if err := support.SetNamed(ctx, "refund_limit", []byte("500")); err != nil {
		t.Fatal(err)
	}
	// A Store that checks nothing appends mallory's signed flood of new keys.
	blind := memory.New(w.anybody, memory.Config{Namespace: "billing", Key: w.mallory, Agent: "mallory"})
	for i := range 10 {
		if err := blind.SetNamed(ctx, fmt.Sprintf("junk-%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	// support's next key is not pushed out by mallory's flood.
	if err := support.SetNamed(ctx, "currency", []byte("EUR")); err != nil {
		t.Fatalf("support's second key after mallory's flood: %v", err)
	}
	fresh := memory.New(w.client, opts)
	held := 0
	for i := range 10 {
		if _, ok := namedValue(t, fresh, fmt.Sprintf("junk-%d", i)); ok {
			held++
		}
	}
	if held != 3 {
		t.Fatalf("a fresh Store holds %d of mallory's 10 new keys, want the bound 3", held)
	}
	if fresh.Refused() < 7 {
		t.Fatalf("a fresh Store refused %d named writes, want at least mallory's 7 past the bound", fresh.Refused())
	}
	for key, want := range map[string]string{"refund_limit": "500", "currency": "EUR"} {
		if v, ok := namedValue(t, fresh, key); !ok || v != want {
			t.Fatalf("a fresh Store reads %s %q (%v), want support's %q", key, v, ok, want)
		}
	}
	// Rewriting a held key is no new key, and a writer at its bound is told so.
	mallory := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.mallory, Agent: "mallory", MaxNamedKeys: 3})
	if err := mallory.SetNamed(ctx, "junk-0", []byte("y")); err != nil {
		t.Fatalf("mallory rewriting a key it holds: %v", err)
	}
	if err := mallory.SetNamed(ctx, "junk-99", []byte("y")); !errors.Is(err, memory.ErrHeld) {
		t.Fatalf("mallory's fourth key: err = %v, want ErrHeld", err)
	}
}

func TestAForgottenNamedKeyWrittenAgainIsNotCountedTwice(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	support := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.support, Agent: "support", MaxNamedKeys: 1})
	for i := range 5 {
		if err := support.SetNamed(ctx, "refund_limit", []byte(fmt.Sprint(i))); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if err := support.ForgetNamed(ctx, "refund_limit"); err != nil {
			t.Fatalf("forget %d: %v", i, err)
		}
	}
	if err := support.SetNamed(ctx, "refund_limit", []byte("500")); err != nil {
		t.Fatal(err)
	}
	if v, ok := namedValue(t, memory.New(w.client, memory.Config{Namespace: "billing", MaxNamedKeys: 1}), "refund_limit"); !ok || v != "500" {
		t.Fatalf("a fresh Store reads refund_limit %q (%v), want 500", v, ok)
	}
}

// Without a verifier the bound holds too, and SetNamed says so at once
// instead of appending a write the fold then refuses.
func TestAnUnsignedStoreIsToldItsNamedKeyBound(t *testing.T) {
	ctx := t.Context()
	client := runtime.NewClient(embedlog.New("shop", embedlog.Config{}), runtime.ClientConfig{})
	if err := client.Bootstrap(ctx, 1); err != nil {
		t.Fatal(err)
	}
	mem := memory.New(client, memory.Config{Namespace: "billing", MaxNamedKeys: 1})
	if err := mem.SetNamed(ctx, "refund_limit", []byte("500")); err != nil {
		t.Fatal(err)
	}
	if err := mem.SetNamed(ctx, "refund_limit", []byte("700")); err != nil {
		t.Fatalf("rewriting the held key: %v", err)
	}
	if err := mem.SetNamed(ctx, "currency", []byte("EUR")); !errors.Is(err, memory.ErrHeld) {
		t.Fatalf("a second key past the bound of 1: err = %v, want ErrHeld", err)
	}
	if v, ok := namedValue(t, mem, "refund_limit"); !ok || v != "700" {
		t.Fatalf("refund_limit = %q (%v), want 700", v, ok)
	}
}
