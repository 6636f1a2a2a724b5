package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/proccpu"
	"github.com/lasergo/laser/memory"
	laser "github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/statestore"
	"github.com/lasergo/laser/wire"
)

// benchItems is the size of the recall benchmarks' memory.
const benchItems = 100_000

var vocabulary = func() []string {
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 3000)
	for i := range words {
		n := 3 + r.IntN(7)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		words[i] = string(b)
	}
	return words
}()

// benchBody is a deterministic body of about 200 bytes: words of a
// vocabulary of 3,000 (skewed, so some are common) and an invoice number.
func benchBody(r *rand.Rand, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INV-%d ", i)
	for b.Len() < 200 {
		b.WriteString(vocabulary[int(float64(len(vocabulary))*r.Float64()*r.Float64())])
		b.WriteByte(' ')
	}
	return b.String()
}

// benchFixture is the shared 100,000-item memory, its client, and the heap
// its projection took per item.
type benchFixture struct {
	mem     *memory.Store
	client  *laser.Client
	perItem float64
}

var benchMemory = sync.OnceValue(func() benchFixture {
	ctx := context.Background()
	client := laser.NewClient(embedlog.New("bench", embedlog.Config{}), laser.ClientConfig{})
	if err := client.Bootstrap(ctx, 4); err != nil {
		panic(err)
	}
	writer := memory.New(client, memory.Config{})
	r := rand.New(rand.NewPCG(3, 4))
	for i := range benchItems {
		conv := wire.IDFromUint128(0, uint64(i%64+1))
		if _, err := writer.Remember(ctx, memory.Scope{Conversation: conv}, memory.Fact, []byte(benchBody(r, i))); err != nil {
			panic(err)
		}
	}
	// A fresh Store folds the records: its heap is the projection's.
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	mem := memory.New(client, memory.Config{})
	if _, err := mem.Recall(ctx, memory.Scope{}, memory.Query{Limit: 1}); err != nil {
		panic(err)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(mem)
	return benchFixture{mem: mem, client: client, perItem: float64(after.HeapAlloc-before.HeapAlloc) / benchItems}
})

// BenchmarkRecall measures recall over 100,000 items of about 200 bytes
// with 256-dimensional vectors, across every conversation, reporting the
// median latency and the projection's heap per item.
func BenchmarkRecall(b *testing.B) {
	f := benchMemory()
	mem, perItem := f.mem, f.perItem
	for _, c := range []struct {
		name string
		q    memory.Query
	}{
		{"recent", memory.Query{Strategy: memory.Recent, Limit: 10}},
		{"keyword", memory.Query{Strategy: memory.Keyword, Text: "INV-4242 " + vocabulary[7] + " " + vocabulary[1500], Limit: 10}},
		{"semantic", memory.Query{Strategy: memory.Semantic, Text: "customer asked about a delayed refund " + vocabulary[3], Limit: 10}},
		{"hybrid", memory.Query{Strategy: memory.Hybrid, Text: "INV-4242 delayed refund " + vocabulary[3], Limit: 10}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := b.Context()
			var times []time.Duration
			cpu := proccpu.Used()
			for b.Loop() {
				start := time.Now()
				items, err := mem.Recall(ctx, memory.Scope{}, c.q)
				times = append(times, time.Since(start))
				if err != nil || len(items) == 0 {
					b.Fatalf("recall: %d items, %v", len(items), err)
				}
			}
			cpu = proccpu.Used() - cpu
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			// On a shared machine the wall time waits for a core; the
			// process's CPU time per recall is what the recall costs.
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(len(times)), "cpu-ms/op")
			b.ReportMetric(perItem, "heap-B/item")
		})
	}
}

// BenchmarkRemember measures remembering items of about 200 bytes (the item
// and its hashed vector) on the embedded log.
func BenchmarkRemember(b *testing.B) {
	ctx := b.Context()
	client := laser.NewClient(embedlog.New("bench", embedlog.Config{}), laser.ClientConfig{})
	if err := client.Bootstrap(ctx, 4); err != nil {
		b.Fatal(err)
	}
	mem := memory.New(client, memory.Config{})
	r := rand.New(rand.NewPCG(3, 4))
	bodies := make([][]byte, 1024)
	for i := range bodies {
		bodies[i] = []byte(benchBody(r, i))
	}
	i := 0
	start := time.Now()
	for b.Loop() {
		conv := wire.IDFromUint128(0, uint64(i%64+1))
		if _, err := mem.Remember(ctx, memory.Scope{Conversation: conv}, memory.Fact, bodies[i%len(bodies)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(i)/time.Since(start).Seconds(), "items/s")
}

// floodItems is the size of the re-embedding benchmark's peer flood.
const floodItems = 20_000

// BenchmarkReembedFlood measures a fresh Store's first semantic recall over
// 20,000 items a peer wrote under another model: the embedder calls and
// texts it makes and its wall time, which includes folding the 20,000
// records. "unbounded" is what every restart paid before recall bounded the
// re-embedding (ReembedPerRecall -1), "bounded" the default bound,
// "cached-restart" the default bound over a CachedEmbedder that a previous
// Store filled, and "fold-only" a recent recall, which embeds nothing.
func BenchmarkReembedFlood(b *testing.B) {
	ctx := b.Context()
	client := laser.NewClient(embedlog.New("bench", embedlog.Config{}), laser.ClientConfig{})
	if err := client.Bootstrap(ctx, 4); err != nil {
		b.Fatal(err)
	}
	peer := memory.New(client, memory.Config{Model: "peer-model"})
	r := rand.New(rand.NewPCG(5, 6))
	for i := range floodItems {
		conv := wire.IDFromUint128(0, uint64(i%64+1))
		if _, err := peer.Remember(ctx, memory.Scope{Conversation: conv}, memory.Fact, []byte(benchBody(r, i))); err != nil {
			b.Fatal(err)
		}
	}
	cache, err := statestore.NewMemory(statestore.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	warm := &benchEmbedder{}
	cached, err := memory.NewCachedEmbedder(warm, "ours", cache, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := memory.New(client, memory.Config{Embedder: cached, Model: "ours", Dims: memory.HashDims, ReembedPerRecall: -1}).Recall(ctx, memory.Scope{}, memory.Query{Text: "refund", Strategy: memory.Semantic}); err != nil {
		b.Fatal(err)
	}
	semantic := memory.Query{Text: "customer asked about a delayed refund", Strategy: memory.Semantic, Limit: 10}
	for _, c := range []struct {
		name  string
		bound int
		cache bool
		q     memory.Query
	}{
		{"unbounded", -1, false, semantic},
		{"bounded", 0, false, semantic},
		{"cached-restart", 0, true, semantic},
		{"fold-only", 0, false, memory.Query{Strategy: memory.Recent, Limit: 10}},
	} {
		b.Run(c.name, func(b *testing.B) {
			emb := &benchEmbedder{}
			var embedder memory.Embedder = emb
			if c.cache {
				ce, err := memory.NewCachedEmbedder(emb, "ours", cache, nil)
				if err != nil {
					b.Fatal(err)
				}
				embedder = ce
			}
			var awaiting int
			cpu := proccpu.Used()
			for b.Loop() {
				mem := memory.New(client, memory.Config{Embedder: embedder, Model: "ours", Dims: memory.HashDims, ReembedPerRecall: c.bound})
				if _, err := mem.Recall(ctx, memory.Scope{}, c.q); err != nil {
					b.Fatal(err)
				}
				awaiting = mem.Awaiting()
			}
			n := float64(b.N)
			b.ReportMetric(float64((proccpu.Used()-cpu).Microseconds())/1000/n, "cpu-ms/op")
			b.ReportMetric(float64(emb.calls.Load())/n, "embed-calls/op")
			b.ReportMetric(float64(emb.texts.Load())/n, "embed-texts/op")
			b.ReportMetric(float64(awaiting), "awaiting")
		})
	}
}

// benchEmbedder is HashEmbedder counting its calls and texts.
type benchEmbedder struct{ calls, texts atomic.Int64 }

func (e *benchEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	e.texts.Add(int64(len(texts)))
	return memory.HashEmbedder{}.Embed(ctx, texts)
}
