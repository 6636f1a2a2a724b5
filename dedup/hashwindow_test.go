package dedup

import (
	"math/rand/v2"
	"testing"
	"time"
)

// windowModel is the obvious FIFO set hashWindow must behave like: a slice
// in insertion order and a map of the live keys to their insertion.
type windowModel struct {
	limit int
	order []modelSlot
	live  map[Hash]uint64
	seq   uint64
}

func (m *windowModel) insert(h Hash) bool {
	if _, ok := m.live[h]; ok {
		return false
	}
	m.seq++
	if len(m.order) == m.limit {
		old := m.order[0]
		m.order = m.order[1:]
		if m.live[old.h] == old.seq {
			delete(m.live, old.h)
		}
	}
	m.order = append(m.order, modelSlot{h: h, seq: m.seq})
	m.live[h] = m.seq
	return true
}

type modelSlot struct {
	h   Hash
	seq uint64
}

// TestHashWindowBehavesLikeAFIFOSet drives the window and the model with the
// same random inserts and removes, over hashes crowded into a few home slots
// so probe runs wrap and deletions shift entries back, and compares every
// answer and, after each step, which keys are present.
func TestHashWindowBehavesLikeAFIFOSet(t *testing.T) {
	for _, limit := range []int{1, 2, 5, 16, 100} {
		rng := rand.New(rand.NewPCG(uint64(limit), 7))
		w := newHashWindow(limit)
		m := &windowModel{limit: limit, live: map[Hash]uint64{}}
		universe := make([]Hash, 3*limit+3)
		for i := range universe {
			// Few distinct home slots, all near the end of the table at
			// any size it grows to, so runs wrap; some hashes share their
			// tag too, so the ring decides.
			universe[i] = Hash{uint64(rng.IntN(2))<<32 | (0xffff_ffff - uint64(rng.IntN(3))), uint64(i)}
		}
		for step := range 4_000 {
			h := universe[rng.IntN(len(universe))]
			if rng.IntN(4) == 0 {
				w.remove(h)
				delete(m.live, h)
			} else if got, want := w.insert(h), m.insert(h); got != want {
				t.Fatalf("limit %d step %d: insert(%v) = %v, want %v", limit, step, h, got, want)
			}
			if w.live != len(m.live) {
				t.Fatalf("limit %d step %d: %d live, want %d", limit, step, w.live, len(m.live))
			}
			for _, u := range universe {
				_, present := w.find(u)
				_, want := m.live[u]
				if present != want {
					t.Fatalf("limit %d step %d: %v present %v, want %v", limit, step, u, present, want)
				}
			}
		}
	}
}

// TestHashWindowGrowsWithItsKeys pins that a window sized for many keys
// allocates for the keys it holds, not for its limit, and that a limit past
// what the table can index is clamped rather than breaking it.
func TestHashWindowGrowsWithItsKeys(t *testing.T) {
	w := newHashWindow(MaxWindow * 4)
	if w.limit != MaxWindow || len(w.table) > 16 || cap(w.ring) > 16 {
		t.Fatalf("limit %d, table %d, ring %d", w.limit, len(w.table), cap(w.ring))
	}
	for i := range 1000 {
		if !w.insert(Hash{uint64(i) * 0x9e3779b97f4a7c15, uint64(i)}) {
			t.Fatalf("key %d taken for a duplicate", i)
		}
	}
	if w.live != 1000 || len(w.table) > 4096 {
		t.Fatalf("%d live in a table of %d", w.live, len(w.table))
	}
	for i := range 1000 {
		if _, ok := w.find(Hash{uint64(i) * 0x9e3779b97f4a7c15, uint64(i)}); !ok {
			t.Fatalf("key %d lost in growing", i)
		}
	}
}

// TestHashWindowGrowsWhenRemovedKeysFillItsRing marks and takes back as
// many keys as the window holds (handlers that keep failing), so its ring
// is full while its table holds nothing; the keys that follow must still
// find room: the table grows on the eviction path too, and an insert never
// probes a full table forever.
func TestHashWindowGrowsWhenRemovedKeysFillItsRing(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := newHashWindow(1000)
		for i := range 1000 {
			h := Hash{uint64(i) * 0x9e3779b97f4a7c15, uint64(i)}
			w.insert(h)
			w.remove(h)
		}
		for i := range 200 {
			h := Hash{uint64(i+5000) * 0x9e3779b97f4a7c15, uint64(i)}
			if !w.insert(h) {
				t.Errorf("key %d taken for a duplicate", i)
			}
		}
		if w.live != 200 {
			t.Errorf("%d live, want 200", w.live)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("inserting after the ring filled with removed keys never returned: the table is full")
	}
}
