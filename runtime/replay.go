package runtime

import (
	"sync"

	"github.com/lasergo/laser/wire"
)

// replayGuard is the signed-record replay gate: a signature proves
// authorship, not first delivery, so the ids of verified records are
// remembered in a bounded FIFO window. A record whose id already passed is
// a replay. Once the window forgets a record, its signer's horizon moves
// up to that record's signed issued-at, and anything the signer issued at
// or before the horizon is refused as too old to tell from a replay: the
// window's size no longer bounds replay protection, only how far behind
// its own newest records one signer may publish (a signer's records come
// from one clock, so they rarely go backwards). The freshness bound
// (sign.BindingPolicy.MaxAge) refuses anything older than that anyway.
type replayGuard struct {
	mu  sync.Mutex
	ids fifoSet
	// signers interns the principals of the window's slots, and horizon
	// holds each one's issued-at horizon: bounded by the enrolled
	// principals, which no sender can mint.
	signers map[string]uint32
	horizon []uint64
}

func newReplayGuard(capacity int) *replayGuard {
	return &replayGuard{ids: newFIFOSet(capacity), signers: make(map[string]uint32)}
}

// replayVerdict is what the gate made of a verified record.
type replayVerdict uint8

const (
	firstSight replayVerdict = iota
	replayed
	// pastHorizon: issued at or before what the window already forgot of
	// its signer; maybe a replay, so it is refused (dead-lettered, not lost).
	pastHorizon
)

// admit checks the record id rec of principal's record issued at iat (0:
// no signed issued-at) and remembers it when it is new.
func (g *replayGuard) admit(rec wire.ID, principal string, iat uint64) replayVerdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	who, ok := g.signers[principal]
	if !ok {
		who = uint32(len(g.horizon))
		g.signers[principal] = who
		g.horizon = append(g.horizon, 0)
	}
	if iat != 0 && iat <= g.horizon[who] {
		if g.ids.has(rec) {
			return replayed
		}
		return pastHorizon
	}
	first, evicted, didEvict := g.ids.insert(rec, who, iat)
	if didEvict && evicted.iat > g.horizon[evicted.who] {
		g.horizon[evicted.who] = evicted.iat
	}
	if !first {
		return replayed
	}
	return firstSight
}

// reset empties the guard, as a restarted process starts.
func (g *replayGuard) reset(capacity int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ids, g.signers, g.horizon = newFIFOSet(capacity), make(map[string]uint32), nil
}

// forget takes rec back (its message ended neither handled nor parked).
func (g *replayGuard) forget(rec wire.ID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ids.remove(rec)
}

// fifoSet is a bounded set of record ids that evicts in insertion order. A
// removed key leaves a stale slot in the ring, recognised by its sequence
// number when it is evicted.
type fifoSet struct {
	seen  map[wire.ID]uint64 // key -> sequence of its live insertion
	ring  []fifoSlot
	head  int // index of the oldest slot once the ring is full
	limit int
	seq   uint64
	// removed counts ring slots whose key was removed from seen and that
	// the ring has not dropped yet.
	removed int
}

type fifoSlot struct {
	key wire.ID
	seq uint64
	iat uint64 // the record's signed issued-at, 0 when it has none
	who uint32 // its signer, interned by replayGuard
}

func newFIFOSet(capacity int) fifoSet {
	if capacity < 1 {
		capacity = 1
	}
	return fifoSet{seen: make(map[wire.ID]uint64), limit: capacity}
}

// has reports whether key is in the set.
func (f *fifoSet) has(key wire.ID) bool {
	_, ok := f.seen[key]
	return ok
}

// insert adds key and reports whether it was absent, and the live slot it
// evicted to make room, if any.
func (f *fifoSet) insert(key wire.ID, who uint32, iat uint64) (first bool, evicted fifoSlot, didEvict bool) {
	if _, dup := f.seen[key]; dup {
		return false, fifoSlot{}, false
	}
	f.seq++
	slot := fifoSlot{key: key, seq: f.seq, iat: iat, who: who}
	if len(f.ring) < f.limit {
		f.ring = append(f.ring, slot)
	} else {
		// A slot whose key was removed (and maybe inserted again since)
		// must not delete the live entry; with no removed key in the
		// ring, every slot is its key's live entry.
		old := f.ring[f.head]
		if f.removed == 0 {
			delete(f.seen, old.key)
			evicted, didEvict = old, true
		} else if seq, ok := f.seen[old.key]; ok && seq == old.seq {
			delete(f.seen, old.key)
			evicted, didEvict = old, true
		} else {
			f.removed--
		}
		f.ring[f.head] = slot
		f.head = (f.head + 1) % f.limit
	}
	f.seen[key] = f.seq
	return true, evicted, didEvict
}

// remove forgets key; its slot ages out of the ring unnoticed.
func (f *fifoSet) remove(key wire.ID) {
	if _, ok := f.seen[key]; ok {
		delete(f.seen, key)
		f.removed++
	}
}
