package memory

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/lasergo/laser/wire"
)

// TestSemanticScanAcrossProcessorsFindsTheBest checks the scan split
// across goroutines against one over every slot.
func TestSemanticScanAcrossProcessorsFindsTheBest(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // the scan splits only with two or more
	p := newProjection(HashModel, HashDims, 0)
	n := 2 * semanticChunk
	for i := range n {
		id := wire.IDFromUint128(1, uint64(i+1))
		body := fmt.Sprintf("item %d about topic %d and %d", i, i%97, i%89)
		p.absorb(&record{mem: &wire.MemoryRecord{Op: wire.MemoryItem, ID: id.String(), Kind: "fact", Body: []byte(body)}, at: uint64(i + 1)})
		p.setVector(int32(i), hashVector(body))
	}
	q := hashVector("about topic 42 and 17")
	got := p.semantic(&matcher{}, q, 5)
	qv := make([]uint64, p.words)
	qs, qsum := pack(qv, q, true)
	b := p.byScore(5)
	for i := range n {
		b.offer(scored{slot: int32(i), score: qs * p.scales[i] * float32(packedDot(p.vector(int32(i)), qv, p.sums[i], qsum))})
	}
	want := b.sorted()
	if len(got) != len(want) {
		t.Fatalf("%d results, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rank %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
