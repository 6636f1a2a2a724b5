package memory_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TestUpdateNamedMergesAPatch patches named state on every log.
func TestUpdateNamedMergesAPatch(t *testing.T) {
	for _, tr := range featuretest.Transports(t, "memory_patch") {
		t.Run(tr.Name, func(t *testing.T) {
			ctx := t.Context()
			client := runtime.NewClient(tr.New(t), runtime.ClientConfig{})
			if err := client.Bootstrap(ctx, 1); err != nil {
				t.Fatal(err)
			}
			mem := memory.New(client, memory.Config{})
			if err := mem.SetNamed(ctx, "prefs", []byte(`{"lang":"en","seat":{"row":4,"side":"aisle"},"vip":true}`)); err != nil {
				t.Fatal(err)
			}
			got, err := mem.UpdateNamed(ctx, "prefs", []byte(`{"lang":"fr","seat":{"side":null},"vip":null}`))
			if err != nil {
				t.Fatal(err)
			}
			const want = `{"lang":"fr","seat":{"row":4}}`
			if string(got) != want {
				t.Errorf("UpdateNamed = %s, want %s", got, want)
			}
			fresh := memory.New(client, memory.Config{})
			if v, ok, err := fresh.Named(ctx, "prefs"); err != nil || !ok || string(v) != want {
				t.Errorf("a fresh store reads %s (%v, %v), want %s", v, ok, err, want)
			}
			if got, err := mem.UpdateNamed(ctx, "new", []byte(`{"a":1}`)); err != nil || string(got) != `{"a":1}` {
				t.Errorf("patching a missing key: %s, %v", got, err)
			}
		})
	}
}

func TestUpdateNamedRefusesAPatchThatDoesNotApply(t *testing.T) {
	ctx := t.Context()
	mem := memory.New(newClient(t), memory.Config{})
	if _, err := mem.UpdateNamed(ctx, "prefs", []byte(`{"lang":`)); !errors.Is(err, memory.ErrPatch) {
		t.Errorf("a patch that is not JSON: %v, want ErrPatch", err)
	}
	if err := mem.SetNamed(ctx, "raw", []byte{0xff, 0x00}); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.UpdateNamed(ctx, "raw", []byte(`{"a":1}`)); !errors.Is(err, memory.ErrPatch) {
		t.Errorf("a stored value that is not JSON: %v, want ErrPatch", err)
	}
	if v, _, _ := mem.Named(ctx, "raw"); !bytes.Equal(v, []byte{0xff, 0x00}) {
		t.Errorf("a refused patch changed the value to %q", v)
	}
}

func TestRecallRerankedReordersAndChecks(t *testing.T) {
	ctx := t.Context()
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: wire.ID{1}}
	for _, b := range []string{"tea with milk", "green tea", "coffee"} {
		if _, err := mem.Remember(ctx, scope, memory.Fact, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	reverse := memory.RerankerFunc(func(_ context.Context, q string, items []memory.Item) ([]memory.Item, error) {
		out := slices.Clone(items)
		slices.Reverse(out)
		return out, nil
	})
	q := memory.Query{Text: "tea", Strategy: memory.Keyword}
	first, err := mem.Recall(ctx, scope, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := memory.RecallReranked(ctx, mem, reverse, scope, q)
	if err != nil || len(got) != len(first) || got[0].ID != first[len(first)-1].ID {
		t.Fatalf("reranked %d items (%v), want the recall reversed", len(got), err)
	}
	forger := memory.RerankerFunc(func(_ context.Context, _ string, _ []memory.Item) ([]memory.Item, error) {
		return []memory.Item{{ID: wire.ID{9}}}, nil
	})
	if _, err := memory.RecallReranked(ctx, mem, forger, scope, q); err == nil {
		t.Error("a reranker that invented an item was believed")
	}
}

// joiner summarizes by joining the bodies.
type joiner struct{}

func (joiner) Summarize(_ context.Context, bodies [][]byte) ([]byte, error) {
	return bytes.Join(bodies, []byte(" / ")), nil
}

func TestConsolidateSummarizesAndPrunes(t *testing.T) {
	ctx := t.Context()
	mem := memory.New(newClient(t), memory.Config{})
	scope := memory.Scope{Conversation: wire.ID{2}}
	for _, b := range []string{"hi", "book a table", "for two"} {
		if _, err := mem.Remember(ctx, scope, memory.Message, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []string{"likes window seats", "allergic to nuts"} {
		if _, err := mem.Remember(ctx, scope, memory.Fact, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := memory.Consolidate(ctx, mem, scope, memory.Consolidation{Summarizer: joiner{}, PruneSummarized: true, MaxItems: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summarized != 3 || rep.Pruned != 4 {
		t.Errorf("report = %+v, want 3 summarized, the 3 messages and the older fact pruned", rep)
	}
	items := recall(t, mem, scope)
	var bodies []string
	for _, it := range items {
		bodies = append(bodies, string(it.Body))
	}
	slices.Sort(bodies)
	// The older fact was pruned; the summary reads oldest first.
	if !slices.Equal(bodies, []string{"allergic to nuts", "hi / book a table / for two"}) {
		t.Errorf("after consolidation: %q", bodies)
	}
	if _, err := memory.Consolidate(ctx, mem, scope, memory.Consolidation{}); err == nil {
		t.Error("a pass with nothing to do was accepted")
	}
}
