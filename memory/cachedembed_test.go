package memory_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/statestore"
)

// TestACachedEmbedderSparesARestartTheReembedding: items written under one
// model are embedded again by a Store of another; with a file cache, a
// second fresh Store of that model asks the model for nothing.
func TestACachedEmbedderSparesARestartTheReembedding(t *testing.T) {
	client := newClient(t)
	emb := &tableEmbedder{vectors: map[string][]float32{"a": {1, 0, 0, 0}, "b": {0, 1, 0, 0}, "q": {0, 1, 0, 0}}}
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	peer := memory.Config{Embedder: emb, Model: "table", Dims: 4}
	remember(t, memory.New(client, peer), scope, "a")
	remember(t, memory.New(client, peer), scope, "b")

	dir := filepath.Join(t.TempDir(), "vectors")
	fresh := func() *memory.Store {
		cache, err := statestore.OpenFile(dir, statestore.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		cached, err := memory.NewCachedEmbedder(emb, "table-v2", cache, nil)
		if err != nil {
			t.Fatal(err)
		}
		return memory.New(client, memory.Config{Embedder: cached, Model: "table-v2", Dims: 4})
	}
	q := memory.Query{Text: "q", Strategy: memory.Semantic}
	emb.texts.Store(0)
	recallQ(t, fresh(), scope, q)
	if n := emb.texts.Load(); n != 3 {
		t.Fatalf("the first Store of the new model embedded %d texts, want the query and both items", n)
	}
	emb.texts.Store(0)
	items := recallQ(t, fresh(), scope, q)
	if n := emb.texts.Load(); n != 0 {
		t.Fatalf("a restarted Store embedded %d texts, want none (all cached)", n)
	}
	if got := bodies(items); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("semantic recall from cached vectors %q, want [b a]", got)
	}
}

func TestACachedEmbedderRefusesBadInput(t *testing.T) {
	cache, _ := statestore.NewMemory(statestore.Limits{})
	emb := &tableEmbedder{}
	if _, err := memory.NewCachedEmbedder(emb, "", cache, nil); err == nil {
		t.Error("a cache without a model name was accepted")
	}
	if _, err := memory.NewCachedEmbedder(nil, "m", cache, nil); err == nil {
		t.Error("a cache without an embedder was accepted")
	}
	if _, err := memory.NewCachedEmbedder(emb, "m", nil, nil); err == nil {
		t.Error("an embedder without a cache was accepted")
	}
}

// TestAFullCacheStillEmbeds: a cache at its bound drops the vector, never
// the recall.
func TestAFullCacheStillEmbeds(t *testing.T) {
	client := newClient(t)
	emb := &tableEmbedder{vectors: map[string][]float32{"a": {1, 0, 0, 0}, "q": {1, 0, 0, 0}}}
	cache, _ := statestore.NewMemory(statestore.Limits{MaxKeys: 1})
	cached, err := memory.NewCachedEmbedder(emb, "table", cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	scope := memory.Scope{Conversation: conversation.Derive("ada")}
	mem := memory.New(client, memory.Config{Embedder: cached, Model: "table", Dims: 4})
	remember(t, mem, scope, "a")
	if got := bodies(recallQ(t, mem, scope, memory.Query{Text: "q", Strategy: memory.Semantic})); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("recall over a full cache %q", got)
	}
}
