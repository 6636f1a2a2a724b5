package memory_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/statestore"
)

// Named state updated with a JSON merge patch: null removes a member.
func ExampleStore_UpdateNamed() {
	ctx := context.Background()
	client := runtime.NewClient(embedlog.New("shop", embedlog.Config{}), runtime.ClientConfig{})
	_ = client.Bootstrap(ctx, 1)
	mem := memory.New(client, memory.Config{})
	_ = mem.SetNamed(ctx, "prefs", []byte(`{"lang":"en","seat":"aisle"}`))
	v, err := mem.UpdateNamed(ctx, "prefs", []byte(`{"lang":"fr","seat":null}`))
	fmt.Println(string(v), err)
	_, err = mem.UpdateNamed(ctx, "prefs", []byte(`{"lang":`))
	fmt.Println(err)
	// Output:
	// {"lang":"fr"} <nil>
	// memory: merge patch does not apply: the patch for "prefs" is not JSON: unexpected end of JSON input
}

// Vectors computed once are read back from the cache afterwards; over a
// statestore.File the cache outlives a restart.
func ExampleNewCachedEmbedder() {
	ctx := context.Background()
	cache, _ := statestore.NewMemory(statestore.Limits{MaxKeys: 100_000})
	emb, _ := memory.NewCachedEmbedder(memory.HashEmbedder{}, memory.HashModel, cache, nil)
	first, _ := emb.Embed(ctx, []string{"latency"})
	again, _ := emb.Embed(ctx, []string{"latency"}) // from the cache
	fmt.Println(len(first[0]), slices.Equal(first[0], again[0]))
	// Output:
	// 256 true
}
