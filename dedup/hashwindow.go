package dedup

// hashWindow is the FIFO set behind SlidingWindow: a ring of the last limit
// hashes in insertion order, and an open-addressing table (linear probing,
// at most half full) locating the live ones. Each table slot is one word, a
// 32-bit tag of the hash and the index of its ring slot, so the table a
// probe walks stays small enough to be mostly in cache; the ring is read
// only on a tag match. Both grow as keys arrive, up to the limit, and hold
// no pointers.
type hashWindow struct {
	table []uint64 // tag<<32 | ring index+1; 0 is an empty slot
	mask  uint64   // len(table) - 1; at most 2^31 - 1
	ring  []Hash
	head  int // the oldest ring slot once the ring is full
	limit int
	live  int // hashes in the table
}

func newHashWindow(capacity int) hashWindow {
	capacity = min(max(capacity, 1), MaxWindow)
	return hashWindow{table: make([]uint64, 16), mask: 15, limit: capacity}
}

func (w *hashWindow) home(h Hash) uint64 { return h[0] & w.mask }

// tagOf is the low 32 bits of the hash's first word, the bits its home slot
// is taken from: a table entry knows its home without reading the ring.
func tagOf(h Hash) uint64 { return h[0] & 0xffff_ffff }

// find returns the table index holding h, or the empty index where it
// would go, and whether it was found.
func (w *hashWindow) find(h Hash) (int, bool) {
	tag := tagOf(h)
	for i := w.home(h); ; i = (i + 1) & w.mask {
		s := w.table[i]
		if s == 0 {
			return int(i), false
		}
		if s>>32 == tag && w.ring[uint32(s)-1] == h {
			return int(i), true
		}
	}
}

// insert adds h and reports whether it was absent. A full window first
// evicts its oldest entry.
func (w *hashWindow) insert(h Hash) bool {
	at, ok := w.find(h)
	if ok {
		return false
	}
	var r int
	if len(w.ring) < w.limit {
		r = len(w.ring)
		w.ring = append(w.ring, h)
	} else {
		// The oldest hash goes, unless it was removed already: then no
		// table entry points at its ring slot (a later insertion of the
		// same hash points at its own).
		r = w.head
		if i, ok := w.findSlot(w.ring[r], r); ok {
			w.delete(i)
			at, _ = w.find(h) // the deletion may have shifted h's run
		}
		w.ring[r] = h
		w.head = (w.head + 1) % w.limit
	}
	// Checked after the eviction, whichever branch ran: a full ring whose
	// keys were removed holds fewer live entries than slots, so the table
	// may still have to grow when the ring no longer does.
	if 2*(w.live+1) > len(w.table) {
		w.grow()
		at, _ = w.find(h)
	}
	w.table[at] = tagOf(h)<<32 | uint64(r+1)
	w.live++
	return true
}

// grow doubles the table and places every entry anew.
func (w *hashWindow) grow() {
	old := w.table
	w.table = make([]uint64, 2*len(old))
	w.mask = uint64(len(w.table) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := (s >> 32) & w.mask
		for w.table[i] != 0 {
			i = (i + 1) & w.mask
		}
		w.table[i] = s
	}
}

// findSlot returns the table index of the entry for h that points at ring
// slot r, if there is one.
func (w *hashWindow) findSlot(h Hash, r int) (int, bool) {
	want := tagOf(h)<<32 | uint64(r+1)
	for i := w.home(h); ; i = (i + 1) & w.mask {
		switch w.table[i] {
		case 0:
			return 0, false
		case want:
			return int(i), true
		}
	}
}

// remove forgets h; its ring slot ages out unnoticed.
func (w *hashWindow) remove(h Hash) {
	if i, ok := w.find(h); ok {
		w.delete(i)
	}
}

// delete empties table slot i and shifts back the entries of its probe run
// that would no longer be found past the gap (deletion without tombstones).
func (w *hashWindow) delete(i int) {
	w.live--
	gap := uint64(i)
	for j := (gap + 1) & w.mask; w.table[j] != 0; j = (j + 1) & w.mask {
		home := (w.table[j] >> 32) & w.mask
		// The entry at j may fill the gap only if its home slot is not
		// cyclically within (gap, j]: otherwise a probe from home would
		// stop at the gap's old position.
		if (j > gap && (home <= gap || home > j)) || (j < gap && home <= gap && home > j) {
			w.table[gap] = w.table[j]
			gap = j
		}
	}
	w.table[gap] = 0
}
