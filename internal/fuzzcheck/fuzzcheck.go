// Package fuzzcheck runs a fuzz target's harness as a plain test over a
// fixed set of hostile inputs, so a harness that cannot take some input (a
// Must helper that panics, a slice it indexes blindly) fails `go test` on
// every run instead of ending the first fuzzing session that finds it.
package fuzzcheck

import (
	"math/rand/v2"
	"runtime/debug"
	"testing"
)

// randomInputs is how many random byte strings Inputs adds after the edge
// cases and the seeds' mutations.
const randomInputs = 200

// Inputs returns byte strings a harness must take without panicking: the
// empty and nil slices, every single byte, short runs of 0x00, '0' and
// 0xff, each seed, each seed cut short at a few lengths and with one byte
// flipped at a few places, and random strings of up to 300 bytes. The
// random part is drawn from a PCG seeded with seed, so a failure replays.
func Inputs(seed uint64, seeds ...[]byte) [][]byte {
	out := [][]byte{nil, {}}
	for b := range 256 {
		out = append(out, []byte{byte(b)})
	}
	for _, fill := range []byte{0x00, '0', 0xff} {
		for _, n := range []int{2, 3, 5, 8, 16, 64} {
			run := make([]byte, n)
			for i := range run {
				run[i] = fill
			}
			out = append(out, run)
		}
	}
	r := rand.New(rand.NewPCG(seed, 0x6c61736572))
	for _, s := range seeds {
		out = append(out, s)
		for _, cut := range []int{1, 2, 5, len(s) / 2, len(s) - 1} {
			if cut > 0 && cut < len(s) {
				out = append(out, s[:cut], s[cut:])
			}
		}
		for range min(len(s), 8) {
			m := append([]byte(nil), s...)
			m[r.IntN(len(m))] ^= byte(1 + r.IntN(255))
			out = append(out, m)
		}
	}
	for range randomInputs {
		b := make([]byte, r.IntN(301))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		out = append(out, b)
	}
	return out
}

// Pairs pairs each input with another, for a harness of two byte strings:
// input i with input len-1-i, and each with itself.
func Pairs(in [][]byte) [][2][]byte {
	out := make([][2][]byte, 0, 2*len(in))
	for i, b := range in {
		out = append(out, [2][]byte{b, in[len(in)-1-i]}, [2][]byte{b, b})
	}
	return out
}

// Run calls harness on every input in order and fails t, naming the input,
// at the first one that panics; a harness's own t.Fatal fails t as it
// would under the fuzzer.
func Run[T any](t *testing.T, inputs []T, harness func(*testing.T, T)) {
	t.Helper()
	if p := firstPanic(inputs, func(in T) { harness(t, in) }); p != nil {
		t.Fatalf("the harness panicked on input %d (%#v): %v\n%s", p.index, p.input, p.value, p.stack)
	}
}

// panicked is the first input a harness panicked on.
type panicked struct {
	index int
	input any
	value any
	stack []byte
}

// firstPanic runs harness over inputs until one panics.
func firstPanic[T any](inputs []T, harness func(T)) (p *panicked) {
	for i, in := range inputs {
		func() {
			defer func() {
				if r := recover(); r != nil {
					p = &panicked{index: i, input: in, value: r, stack: debug.Stack()}
				}
			}()
			harness(in)
		}()
		if p != nil {
			return p
		}
	}
	return nil
}
