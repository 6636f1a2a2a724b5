package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func newClient(t *testing.T) *runtime.Client {
	t.Helper()
	client := runtime.NewClient(embedlog.New("shop", embedlog.Config{}), runtime.ClientConfig{})
	if err := client.Bootstrap(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	return client
}

func recall(t *testing.T, mem *memory.Store, scope memory.Scope) []memory.Item {
	t.Helper()
	items, err := mem.Recall(context.Background(), scope, memory.Query{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func TestNamespacesOnOneTopicDoNotSeeEachOthersItemsFeedbackOrTombstones(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	a := memory.New(client, memory.Config{Namespace: "a"})
	b := memory.New(client, memory.Config{Namespace: "b"})
	scope := memory.Scope{Conversation: conversation.Derive("ada"), Agent: "support"}
	id, err := a.Remember(ctx, scope, memory.Fact, []byte("prefers email"))
	if err != nil {
		t.Fatal(err)
	}
	if items := recall(t, b, scope); len(items) != 0 {
		t.Fatalf("namespace b recalls %d items of namespace a", len(items))
	}
	// b's feedback and tombstone for a's item stay in b.
	if _, err := b.Feedback(ctx, scope, id, 5); err != nil {
		t.Fatal(err)
	}
	if err := b.Forget(ctx, scope, id); err != nil {
		t.Fatal(err)
	}
	for name, mem := range map[string]*memory.Store{"the same Store": a, "a fresh Store": memory.New(client, memory.Config{Namespace: "a"})} {
		items := recall(t, mem, scope)
		if len(items) != 1 || items[0].ID != id {
			t.Fatalf("%s of namespace a recalls %v; namespace b's tombstone must not hide a's item", name, items)
		}
		if items[0].Scored {
			t.Fatalf("%s of namespace a sees namespace b's feedback: score %v", name, items[0].Score)
		}
	}
}

func TestForgettingMostItemsKeepsTheRestNewestFirst(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	mem := memory.New(client, memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	var want []wire.ID
	for i := 0; i < 300; i++ {
		id, err := mem.Remember(ctx, scope, memory.Fact, []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			want = append(want, id)
		} else if err := mem.Forget(ctx, scope, id); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 { // fold as it goes, so forgets land on folded items
			recall(t, mem, scope)
		}
	}
	for name, m := range map[string]*memory.Store{"the folding Store": mem, "a fresh Store": memory.New(client, memory.Config{})} {
		items := recall(t, m, scope)
		if len(items) != len(want) {
			t.Fatalf("%s recalls %d items, want %d", name, len(items), len(want))
		}
		for i := range items {
			j := len(want) - 1 - i // newest first
			if items[i].ID != want[j] || string(items[i].Body) != fmt.Sprint(j*5) {
				t.Fatalf("%s: item %d is %s %q, want %s %q", name, i, items[i].ID, items[i].Body, want[j], fmt.Sprint(j*5))
			}
		}
	}
}

// TestRememberWithAnImpossibleAgentIsInvalid pins the error class of a
// memory record whose provenance cannot be written as headers: CodeInvalid,
// as every runtime send verb reports it, and nothing appended.
func TestRememberWithAnImpossibleAgentIsInvalid(t *testing.T) {
	client := newClient(t)
	mem := memory.New(client, memory.Config{})
	scope := memory.Scope{Conversation: conversation.Derive("ada"), Agent: "bad\nagent"}
	_, err := mem.Remember(context.Background(), scope, memory.Fact, []byte("x"))
	if runtime.CodeOf(err) != runtime.CodeInvalid {
		t.Fatalf("err = %v, want CodeInvalid", err)
	}
	if items := recall(t, mem, memory.Scope{Conversation: scope.Conversation}); len(items) != 0 {
		t.Fatalf("recalled %d items after a refused Remember", len(items))
	}
}
