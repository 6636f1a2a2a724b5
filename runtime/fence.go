package runtime

import (
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
type fenceGate struct {
	mu        sync.Mutex
	high      map[fenceKey]fenceEntry
	lastSweep uint64
}

// fenceKey scopes a fence by its sender (the verified principal under a
// verifier, see Consumer.senderScope): fence tokens are one holder's
// sequence, and any signer able to set the conversation's mark could
// otherwise raise it to the maximum and freeze the real holder's flow.
type fenceKey struct {
	sender string
	conv   wire.ConversationID
}

type fenceEntry struct {
	fence   uint64
	touched uint64
}

func newFenceGate() *fenceGate {
	return &fenceGate{high: make(map[fenceKey]fenceEntry)}
}

// accept reports whether fence may pass for sender's conv at nowMicros,
// advancing the high-water mark. An equal fence passes: it is the same holder retrying, and
// dedup catches the duplicate downstream.
func (g *fenceGate) accept(sender string, conv wire.ConversationID, fence, nowMicros uint64) bool {
	k := fenceKey{sender: sender, conv: conv}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.high) > fenceSoftCap && nowMicros-min(nowMicros, g.lastSweep) > fenceSweepMicros {
		g.lastSweep = nowMicros
		for k, e := range g.high {
			if nowMicros-min(nowMicros, e.touched) >= fenceIdleMicros {
				delete(g.high, k)
			}
		}
	}
	e, ok := g.high[k]
	if ok && fence < e.fence {
		return false
	}
	g.high[k] = fenceEntry{fence: fence, touched: nowMicros}
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
	for _, e := range g.high {
		touched = append(touched, e.touched)
	}
	slices.Sort(touched)
	cutoff := touched[len(touched)-fenceSoftCap] // keep entries touched at or after it
	for k, e := range g.high {
		if e.touched < cutoff {
			delete(g.high, k)
		}
	}
}

// len returns how many conversations the gate tracks.
func (g *fenceGate) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.high)
}
