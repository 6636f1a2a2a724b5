package runtime

import (
	"encoding/binary"
	goruntime "runtime"
	"testing"

	"github.com/lasergo/laser/internal/figures"
	"github.com/lasergo/laser/wire"
)

// Memory under load of the consumer's bounded state, part of the
// reliability suite (`make reliability` runs a million distinct keys, the
// default run a tenth of that): the fence map and the signed-record replay
// window must stay at their bounds however many distinct keys pass, and
// the heap they retain is reported.

// memoryKeys is how many distinct keys each memory test feeds.
func memoryKeys() int {
	if figures.Full() {
		return 1_000_000
	}
	return 100_000
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}

func retained(before, after uint64) uint64 {
	if after < before {
		return 0
	}
	return after - before
}

// TestFenceMapStaysBoundedUnderDistinctConversations feeds distinct
// conversations 100 ms of injected time apart: the map may exceed its soft
// cap only by the conversations touched within the idle horizon (600 s) and
// the one-second sweep interval, never by the total seen.
func TestFenceMapStaysBoundedUnderDistinctConversations(t *testing.T) {
	const step = 100_000 // µs between two conversations
	n := memoryKeys()
	before := liveHeap()
	g := newFenceGate()
	now := uint64(1_700_000_000_000_000)
	// Conversations touched within the idle horizon plus one sweep interval
	// (an entry idle for just under 600 s survives a sweep, and the next
	// sweep may be up to 1 s away), and the one just added.
	recent := int((fenceIdleMicros+fenceSweepMicros)/step) + 1
	bound := fenceSoftCap + recent
	peak := 0
	for i := range n {
		var conv wire.ConversationID
		binary.BigEndian.PutUint64(conv[8:], uint64(i)+1)
		if !g.accept("", conv, 1, now) {
			t.Fatalf("conversation %d refused a first fence", i)
		}
		if l := len(g.high); l > peak {
			peak = l
			if l > bound {
				t.Fatalf("after %d conversations the fence map holds %d entries, bound %d", i+1, l, bound)
			}
		}
		now += step
	}
	after := liveHeap()
	final := g.len()
	goruntime.KeepAlive(g)
	if n > bound && peak < fenceSoftCap {
		t.Errorf("peak %d never reached the soft cap %d; the test did not load the map", peak, fenceSoftCap)
	}
	heap := retained(before, after)
	if heap > 16<<20 {
		t.Errorf("the fence map retains %d bytes after %d conversations", heap, n)
	}
	figures.Record(t, figures.Row{Section: "memory", Case: "fence map (100 ms apart)", Values: []figures.Value{
		figures.V("distinct_keys", n),
		figures.V("entries", final),
		figures.V("peak_entries", peak),
		figures.V("bound", bound),
		figures.V("heap_bytes", heap),
		figures.V("bytes_per_entry", heap/uint64(max(peak, 1))),
	}})
}

// TestFenceMapUnderABurstStaysUnderItsHardCap feeds distinct conversations
// 100 µs apart, all within the idle horizon, so the idle sweep frees
// nothing: the hard cap must still bound the map, keeping the most recently
// touched conversations.
func TestFenceMapUnderABurstStaysUnderItsHardCap(t *testing.T) {
	const step = 100 // µs
	n := memoryKeys()
	before := liveHeap()
	g := newFenceGate()
	now := uint64(1_700_000_000_000_000)
	peak := 0
	var last wire.ConversationID
	for i := range n {
		binary.BigEndian.PutUint64(last[8:], uint64(i)+1)
		g.accept("", last, 2, now)
		peak = max(peak, g.len())
		now += step
	}
	after := liveHeap()
	entries := g.len()
	goruntime.KeepAlive(g)
	if peak > fenceHardCap {
		t.Errorf("the fence map reached %d entries, over its hard cap %d", peak, fenceHardCap)
	}
	if n > fenceHardCap && peak < fenceHardCap {
		t.Errorf("peak %d never reached the hard cap; the test did not load the map", peak)
	}
	// The newest conversation kept its high-water mark through the shedding.
	if g.accept("", last, 1, now) {
		t.Error("a stale fence on the newest conversation passed after shedding")
	}
	heap := retained(before, after)
	figures.Record(t, figures.Row{Section: "memory", Case: "fence map (burst, 100 µs apart)", Values: []figures.Value{
		figures.V("distinct_keys", n),
		figures.V("entries", entries),
		figures.V("peak_entries", peak),
		figures.V("bound", fenceHardCap),
		figures.V("heap_bytes", heap),
		figures.V("bytes_per_entry", heap/uint64(max(entries, 1))),
	}})
}

// TestReplayWindowStaysAtItsCap inserts distinct signed-record ids into the
// consumer's replay window: it holds exactly its 16,384 newest ids.
func TestReplayWindowStaysAtItsCap(t *testing.T) {
	n := memoryKeys()
	before := liveHeap()
	c, err := NewConsumer(nopTransport{}, ConsumerConfig{Topic: "t", Group: "g", Handler: HandlerFunc(func(*Ctx) error { return nil })})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		var rec wire.ID
		binary.BigEndian.PutUint64(rec[8:], uint64(i)+1)
		if c.replay.admit(rec, "p", 0) != firstSight {
			t.Fatalf("record %d reported as a replay", i)
		}
	}
	after := liveHeap()
	seen, ring := len(c.replay.ids.seen), len(c.replay.ids.ring)
	// The newest id is still remembered, the oldest long forgotten.
	var newest, oldest wire.ID
	binary.BigEndian.PutUint64(newest[8:], uint64(n))
	binary.BigEndian.PutUint64(oldest[8:], 1)
	_, keptNewest := c.replay.ids.seen[newest]
	_, keptOldest := c.replay.ids.seen[oldest]
	goruntime.KeepAlive(c)
	if seen != replayWindow || ring != replayWindow {
		t.Errorf("replay window holds %d ids in a ring of %d after %d records, want %d", seen, ring, n, replayWindow)
	}
	if !keptNewest || keptOldest {
		t.Errorf("newest kept %v, oldest kept %v; want the newest only", keptNewest, keptOldest)
	}
	heap := retained(before, after)
	if heap > 8<<20 {
		t.Errorf("the replay window retains %d bytes", heap)
	}
	figures.Record(t, figures.Row{Section: "memory", Case: "replay window", Values: []figures.Value{
		figures.V("distinct_keys", n),
		figures.V("entries", seen),
		figures.V("peak_entries", ring),
		figures.V("bound", replayWindow),
		figures.V("heap_bytes", heap),
		figures.V("bytes_per_entry", heap/uint64(max(seen, 1))),
	}})
}

// TestIsAnswerOfNoErrorAllocatesNothing checks what every handled record
// asks: whether the handler's nil error is an answer.
func TestIsAnswerOfNoErrorAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = isAnswer(nil) }); n != 0 {
		t.Fatalf("isAnswer(nil) allocates %v times", n)
	}
}
