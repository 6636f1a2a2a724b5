package runtime

import (
	"hash/maphash"
	"slices"
	"sync"

	"github.com/lasergo/laser/wire"
)

// Fence gate tuning, the reference's values.
const (
	// fenceSoftCap is the entry count above which idle entries are swept.
	fenceSoftCap = 16_384
	// fenceIdleMicros is how long an entry may sit untouched before a sweep
	// drops it: long enough that a stale holder's replay is implausible.
	fenceIdleMicros = 600_000_000
	// fenceSweepMicros is the least time between two sweeps, so the O(n)
	// sweep does not run on every message under load.
	fenceSweepMicros = 1_000_000
	// fenceHardCap bounds the map whatever the traffic: a burst of distinct
	// conversations inside the idle horizon would otherwise keep every one.
	// Past it the least recently touched entries go until the soft cap is
	// left, so memory stays bounded at the price of reopening the gate for
	// conversations idle longer than the newest 16,384 (dedup stays the
	// backstop for those). The reference has no such cap.
	fenceHardCap = 4 * fenceSoftCap
)

// fenceGate keeps the highest fence token accepted per sender and
// conversation and drops messages from a holder whose fence has been
// superseded.
//
// The map holds an index into entries rather than the entry itself, so the
// common case, a conversation already tracked, is one map lookup and a
// write in place instead of a lookup and a store (two hashes of the key,
// two probes); indexes of dropped entries are reused from free.
type fenceGate struct {
	mu        sync.Mutex
	seed      maphash.Seed // the gate's own: senders cannot aim at a collision
	high      map[fenceKey]int32
	entries   []fenceEntry
	free      []int32
	lastSweep uint64
}

// fenceKey scopes a fence by its sender (the verified principal under a
// verifier, see Consumer.senderScope): fence tokens are one holder's
// sequence, and any signer able to set the conversation's mark could
// otherwise raise it to the maximum and freeze the real holder's flow.
// The sender is held as its 64-bit hash under the gate's random seed: a
// fixed-size key hashes and compares without reading the sender's text
// (a cache miss per message when the key held a string), keeps no copy of
// it, and two senders share a mark only if their hashes collide, which no
// sender can arrange without the seed.
type fenceKey struct {
	sender uint64
	conv   wire.ConversationID
}

type fenceEntry struct {
	fence   uint64
	touched uint64
}

func newFenceGate() *fenceGate {
	return &fenceGate{seed: maphash.MakeSeed(), high: make(map[fenceKey]int32)}
}

// accept reports whether fence may pass for sender's conv at nowMicros,
// advancing the high-water mark. An equal fence passes: it is the same holder retrying, and
// dedup catches the duplicate downstream.
func (g *fenceGate) accept(sender string, conv wire.ConversationID, fence, nowMicros uint64) bool {
	k := fenceKey{sender: maphash.String(g.seed, sender), conv: conv}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.high) > fenceSoftCap && nowMicros-min(nowMicros, g.lastSweep) > fenceSweepMicros {
		g.lastSweep = nowMicros
		for k, i := range g.high {
			if nowMicros-min(nowMicros, g.entries[i].touched) >= fenceIdleMicros {
				g.drop(k, i)
			}
		}
	}
	if i, ok := g.high[k]; ok {
		e := &g.entries[i]
		if fence < e.fence {
			return false
		}
		*e = fenceEntry{fence: fence, touched: nowMicros}
		return true
	}
	var i int32
	if n := len(g.free); n > 0 {
		i, g.free = g.free[n-1], g.free[:n-1]
		g.entries[i] = fenceEntry{fence: fence, touched: nowMicros}
	} else {
		i = int32(len(g.entries))
		g.entries = append(g.entries, fenceEntry{fence: fence, touched: nowMicros})
	}
	g.high[k] = i
	if len(g.high) > fenceHardCap {
		g.shed()
	}
	return true
}

// shed drops the least recently touched entries until the soft cap is
// left. It runs once per fenceHardCap-fenceSoftCap new conversations at
// most, so its sort is amortized to a few operations per message.
func (g *fenceGate) shed() {
	touched := make([]uint64, 0, len(g.high))
	for _, i := range g.high {
		touched = append(touched, g.entries[i].touched)
	}
	slices.Sort(touched)
	cutoff := touched[len(touched)-fenceSoftCap] // keep entries touched at or after it
	for k, i := range g.high {
		if g.entries[i].touched < cutoff {
			g.drop(k, i)
		}
	}
}

// drop forgets k, whose entry is at index i, and keeps i for reuse.
func (g *fenceGate) drop(k fenceKey, i int32) {
	delete(g.high, k)
	g.entries[i] = fenceEntry{}
	g.free = append(g.free, i)
}

// len returns how many conversations the gate tracks.
func (g *fenceGate) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.high)
}
