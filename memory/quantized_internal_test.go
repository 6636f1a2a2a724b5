package memory

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestPackedDotIsTheDotOfTheLevels(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, dims := range []int{1, 3, 4, 5, 256} {
		a, b := make([]float32, dims), make([]float32, dims)
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		normalize(a)
		normalize(b)
		pa, pb := make([]uint64, packedWords(dims)), make([]uint64, packedWords(dims))
		sa, suma := pack(pa, a, false)
		sb, sumb := pack(pb, b, true)
		var levels int32
		for i := range a {
			levels += int32(math.Round(float64(a[i]/sa))) * int32(math.Round(float64(b[i]/sb)))
		}
		if got := packedDot(pa, pb, suma, sumb); got != levels {
			t.Fatalf("%d dims: packed dot %d, want the levels' %d", dims, got, levels)
		}
		var exact float64
		for i := range a {
			exact += float64(a[i]) * float64(b[i])
		}
		if approx := float64(sa * sb * float32(levels)); math.Abs(approx-exact) > 0.02 {
			t.Fatalf("%d dims: cosine %v, quantized %v", dims, exact, approx)
		}
	}
}

func TestPackedDotOfExtremeLevelsDoesNotCarry(t *testing.T) {
	// Every level at ±63: each lane's product is the largest, 127² or 1.
	for _, sign := range []float32{1, -1} {
		v := make([]float32, 8)
		for i := range v {
			v[i] = sign
		}
		w := make([]float32, 8)
		for i := range w {
			w[i] = 1
		}
		pv, pw := make([]uint64, 2), make([]uint64, 2)
		_, sv := pack(pv, v, false)
		_, sw := pack(pw, w, true)
		if got, want := packedDot(pv, pw, sv, sw), int32(sign)*8*63*63; got != want {
			t.Fatalf("sign %v: %d, want %d", sign, got, want)
		}
	}
}
