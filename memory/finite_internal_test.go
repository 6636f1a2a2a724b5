package memory

import (
	"math"
	"testing"

	"github.com/lasergo/laser/wire"
)

// projectionOf folds one item per vector into a fresh projection, slot i
// holding vecs[i].
func projectionOf(t *testing.T, vecs [][]float32) *projection {
	t.Helper()
	p := newProjection("m", len(vecs[0]), 0)
	for i, v := range vecs {
		id := wire.IDFromUint128(1, uint64(i+1))
		p.absorb(&record{mem: &wire.MemoryRecord{Op: wire.MemoryItem, ID: id.String(), Kind: "fact", Body: []byte("x")}, at: uint64(i + 1)})
		p.setVector(int32(i), v)
	}
	return &p
}

func slots(got []scored) []int32 {
	out := make([]int32, len(got))
	for i, c := range got {
		out[i] = c.slot
	}
	return out
}

func TestSetVectorNaNIsNoVector(t *testing.T) {
	nan := float32(math.NaN())
	p := projectionOf(t, [][]float32{{nan, 0, 0, 0}, {1, 0, 0, 0}, {0.9, 0.1, 0, 0}})
	got := slots(p.semantic(&matcher{}, []float32{1, 0, 0, 0}, 2))
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("semantic top-2 = %v, want [1 2] (the NaN item unranked)", got)
	}
	if !p.items[0].hasVec {
		t.Fatal("the NaN item would be embedded again on every recall")
	}
}

func TestSetVectorInfOrZeroIsNoVector(t *testing.T) {
	inf := float32(math.Inf(1))
	p := projectionOf(t, [][]float32{{inf, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}})
	got := slots(p.semantic(&matcher{}, []float32{1, 0, 0, 0}, 3))
	if len(got) != 1 || got[0] != 2 {
		t.Fatalf("semantic = %v, want only slot 2", got)
	}
}

func TestSemanticZeroQueryRanksNothing(t *testing.T) {
	p := projectionOf(t, [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}})
	if got := p.semantic(&matcher{}, []float32{0, 0, 0, 0}, 2); len(got) != 0 {
		t.Fatalf("zero query ranked %v, want nothing", slots(got))
	}
}

func TestDecodeVectorRejectsNonFinite(t *testing.T) {
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		b := marshalVector(&vectorRecord{target: wire.IDFromUint128(1, 1), model: "m", vec: []float32{1, float32(x), 0}})
		if _, err := decodeVector(b); err == nil {
			t.Fatalf("decodeVector accepted a vector holding %v", x)
		}
	}
}
