package fuzzcheck

import (
	"bytes"
	"slices"
	"testing"
)

func TestInputsHoldTheEdgesAndTheSeedsAndReplay(t *testing.T) {
	seed := []byte("seed-bytes")
	in := Inputs(1, seed)
	has := func(want []byte) bool {
		return slices.ContainsFunc(in, func(b []byte) bool { return bytes.Equal(b, want) })
	}
	for _, want := range [][]byte{{}, {0}, {0xff}, []byte("000"), seed, seed[:1], seed[5:]} {
		if !has(want) {
			t.Errorf("Inputs lacks %q", want)
		}
	}
	again := Inputs(1, seed)
	if !slices.EqualFunc(in, again, bytes.Equal) {
		t.Fatal("the same seed gave other inputs")
	}
	if other := Inputs(2, seed); slices.EqualFunc(in, other, bytes.Equal) {
		t.Fatal("another seed gave the same random inputs")
	}
}

func TestPairsPairEveryInput(t *testing.T) {
	in := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	got := Pairs(in)
	want := [][2][]byte{{in[0], in[2]}, {in[0], in[0]}, {in[1], in[1]}, {in[1], in[1]}, {in[2], in[0]}, {in[2], in[2]}}
	if !slices.EqualFunc(got, want, func(a, b [2][]byte) bool { return bytes.Equal(a[0], b[0]) && bytes.Equal(a[1], b[1]) }) {
		t.Fatalf("Pairs = %q, want %q", got, want)
	}
}

func TestFirstPanicNamesTheInputAndStops(t *testing.T) {
	var seen []int
	p := firstPanic([]int{1, 2, 3, 4}, func(n int) {
		seen = append(seen, n)
		if n == 3 {
			panic("boom")
		}
	})
	if p == nil || p.index != 2 || p.input != 3 || p.value != "boom" || len(p.stack) == 0 {
		t.Fatalf("firstPanic = %+v", p)
	}
	if !slices.Equal(seen, []int{1, 2, 3}) {
		t.Fatalf("ran inputs %v, want 1 2 3", seen)
	}
	if p := firstPanic([]int{1, 2}, func(int) {}); p != nil {
		t.Fatalf("firstPanic without a panic = %+v", p)
	}
}
