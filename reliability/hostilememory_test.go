package reliability_test

import (
	"fmt"
	goruntime "runtime"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/heapprobe"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// The hostile peer against agent memory (issue 34, memory): holding its
// own enrolled key, mallory forgets and down-ranks support's items,
// overwrites and forgets support's named key, pre-forgets and squats the
// content id of a fact support remembers later, and replays support's
// captured records once their items left the bounded view; holding no
// key, it floods forgets and feedback for ids never remembered.
func TestHostilePeerMemory(t *testing.T) {
	ctx := t.Context()
	n := peerScale(200, 100_000)
	supportKey, malloryKey := sign.NewKey(seed(51)), sign.NewKey(seed(52))
	reg := sign.NewRegistry()
	if err := reg.Enroll("support", supportKey.Public()); err != nil {
		t.Fatal(err)
	}
	if err := reg.Enroll("mallory", malloryKey.Public()); err != nil {
		t.Fatal(err)
	}
	probe := heapprobe.Wrap(embedlog.New("peer", embedlog.Config{}))
	verifying := runtime.NewClient(probe, runtime.ClientConfig{Verifier: reg, Logger: peerQuiet()})
	blind := runtime.NewClient(probe, runtime.ClientConfig{Logger: peerQuiet()})
	if err := verifying.Bootstrap(ctx, 4); err != nil {
		t.Fatal(err)
	}
	const maxItems = 8
	support := memory.New(verifying, memory.Config{Namespace: "billing", Key: supportKey, Agent: "support", MaxItems: maxItems})
	mallory := memory.New(blind, memory.Config{Namespace: "billing", Key: malloryKey, Agent: "mallory"})
	anybody := memory.New(blind, memory.Config{Namespace: "billing"})
	scope := memory.Scope{Conversation: conversation.Derive("ada"), Agent: "support"}
	fact := []byte("refunds above 500 need a manager")

	// Before support writes: a pre-forget of its fact's content id.
	if err := mallory.Forget(ctx, scope, memory.ContentID("", "support", memory.Fact, fact)); err != nil {
		t.Fatal(err)
	}
	if err := support.SetNamed(ctx, "refund_limit", []byte("500")); err != nil {
		t.Fatal(err)
	}
	var first wire.ID
	for i := range maxItems {
		id, err := support.Remember(ctx, scope, memory.Fact, fmt.Appendf(nil, "policy %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = id
		}
	}
	factID, err := support.Remember(ctx, scope, memory.Fact, fact, memory.Dedup())
	if err != nil {
		t.Fatal(err)
	}
	// "policy 0" has left support's bounded view; its records are captured.
	if _, err := support.Recall(ctx, scope, memory.Query{Limit: 100}); err != nil {
		t.Fatal(err)
	}
	var captured []runtime.Incoming
	parts, err := probe.Partitions(ctx, support.Topic())
	if err != nil {
		t.Fatal(err)
	}
	for p := range parts {
		recs, err := probe.ReadRange(ctx, support.Topic(), p, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		captured = append(captured, recs...)
	}

	sent := 1
	for i := range n {
		switch i % 4 {
		case 0:
			err = mallory.Forget(ctx, scope, factID)
		case 1:
			_, err = mallory.Feedback(ctx, scope, factID, -100)
		case 2:
			err = mallory.SetNamed(ctx, "refund_limit", []byte("1000000"))
		case 3:
			err = mallory.ForgetNamed(ctx, "refund_limit")
		}
		if err != nil {
			t.Fatal(err)
		}
		sent++
	}
	for _, r := range captured { // every record so far, re-appended verbatim
		if _, err := blind.Publish(ctx, support.Topic(), runtime.Outgoing{Key: wire.PartitionKey(scope.Conversation), Headers: r.Headers.Decode(), Payload: r.Payload}); err != nil {
			t.Fatal(err)
		}
		sent++
	}
	for i := range n { // no key: forgets and feedback of ids never remembered
		id := wire.IDFromUint128(0xf100d, uint64(i)+1)
		if err := anybody.Forget(ctx, scope, id); err != nil {
			t.Fatal(err)
		}
		if _, err := anybody.Feedback(ctx, scope, id, 1); err != nil {
			t.Fatal(err)
		}
		sent += 2
	}

	victim := memory.New(verifying, memory.Config{Namespace: "billing", MaxItems: maxItems})
	probe.Reset()
	items, err := victim.Recall(ctx, scope, memory.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	limit, ok, err := victim.Named(ctx, "refund_limit")
	if err != nil {
		t.Fatal(err)
	}
	probe.Sample()
	held := probe.Held()
	goruntime.KeepAlive(victim)
	if len(items) != maxItems || items[0].ID != factID || items[0].Feedback != 0 {
		t.Fatalf("the victim recalls %d items, newest %+v; want %d, support's fact first without feedback", len(items), items[0], maxItems)
	}
	for _, it := range items {
		if it.ID == first {
			t.Fatal("the evicted item came back with its replayed records")
		}
	}
	if !ok || string(limit) != "500" {
		t.Fatalf("refund_limit %q (%v), want support's 500", limit, ok)
	}
	if held > 4<<20 {
		t.Fatalf("the fold held %d KiB", held>>10)
	}
	peerRow(t, "rewrites agent memory (item 3, memory)", sent, victim.Refused(), len(items), held)
}
