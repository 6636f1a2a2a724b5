package runtime

import (
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
)

// fenceGate keeps the highest fence token accepted per conversation and
// drops messages from a holder whose fence has been superseded.
type fenceGate struct {
	mu        sync.Mutex
	high      map[wire.ConversationID]fenceEntry
	lastSweep uint64
}

type fenceEntry struct {
	fence   uint64
	touched uint64
}

func newFenceGate() *fenceGate {
	return &fenceGate{high: make(map[wire.ConversationID]fenceEntry)}
}

// accept reports whether fence may pass for conv at nowMicros, advancing the
// high-water mark. An equal fence passes: it is the same holder retrying, and
// dedup catches the duplicate downstream.
func (g *fenceGate) accept(conv wire.ConversationID, fence, nowMicros uint64) bool {
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
	e, ok := g.high[conv]
	if ok && fence < e.fence {
		return false
	}
	g.high[conv] = fenceEntry{fence: fence, touched: nowMicros}
	return true
}

// len returns how many conversations the gate tracks.
func (g *fenceGate) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.high)
}
