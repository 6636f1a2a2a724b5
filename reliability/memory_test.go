package reliability_test

import (
	"context"
	goruntime "runtime"
	"strconv"
	"testing"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/internal/figures"
)

// memoryKeys is how many distinct keys the memory test feeds: a million
// under `make reliability`, a tenth of that by default. (The fence map and
// the replay window are measured by runtime/memory_internal_test.go.)
func memoryKeys() int {
	if figures.Full() {
		return 1_000_000
	}
	return 100_000
}

func liveHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestDedupWindowStaysAtItsCap observes distinct scoped idempotency keys
// through the consumer's default dedup window: it keeps exactly its 10,000
// newest keys (the newest still reported as duplicates, the oldest
// forgotten) and its heap stays that of 10,000 keys.
func TestDedupWindowStaysAtItsCap(t *testing.T) {
	ctx := context.Background()
	n := memoryKeys()
	key := func(i int) string {
		return dedup.Key("producer-agent", "order-"+strconv.Itoa(i))
	}
	before := liveHeap()
	w := dedup.NewSlidingWindow(dedup.DefaultWindow)
	peak := 0
	for i := range n {
		fresh, err := w.Observe(ctx, key(i))
		if err != nil || !fresh {
			t.Fatalf("key %d: fresh %v, err %v", i, fresh, err)
		}
		if l := w.Len(); l > peak {
			peak = l
		}
	}
	after := liveHeap()
	entries := w.Len()
	if entries != dedup.DefaultWindow || peak != dedup.DefaultWindow {
		t.Errorf("window holds %d keys (peak %d) after %d, want %d", entries, peak, n, dedup.DefaultWindow)
	}
	if fresh, _ := w.Observe(ctx, key(n-1)); fresh {
		t.Error("the newest key is no longer recognised as a duplicate")
	}
	if fresh, _ := w.Observe(ctx, key(0)); !fresh {
		t.Error("the oldest key is still remembered")
	}
	goruntime.KeepAlive(w)
	heap := uint64(0)
	if after > before {
		heap = after - before
	}
	if heap > 8<<20 {
		t.Errorf("the dedup window retains %d bytes after %d keys", heap, n)
	}
	figures.Record(t, figures.Row{Section: "memory", Case: "dedup window", Values: []figures.Value{
		figures.V("distinct_keys", n),
		figures.V("entries", entries),
		figures.V("peak_entries", peak),
		figures.V("bound", dedup.DefaultWindow),
		figures.V("heap_bytes", heap),
		figures.V("bytes_per_entry", heap/uint64(max(entries, 1))),
	}})
}
