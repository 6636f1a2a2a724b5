package runtime

import "testing"

// Under PerPartition(2) the lanes went to the first two partitions seen;
// after a rebalance revoked one of them, a partition assigned since must
// take its lane rather than run inline (where its slow handler would
// block intake for every partition). Driven on the scheduler's state, so
// the order of polls plays no part.
func TestLanesAreFreedByARebalance(t *testing.T) {
	sc := &scheduler{n: 2, lanes: 2, keys: make(map[orderKey]*keyQueue)}
	p := func(n uint32) orderKey { return orderKey{partition: n} }
	busy := func(q *keyQueue) { q.scheduled = true }
	idle := func(q *keyQueue) { q.scheduled = false }

	p0, p1 := sc.queueOf(p(0)), sc.queueOf(p(1))
	if p0.inline || p1.inline {
		t.Fatal("the first two partitions seen did not get the two lanes")
	}
	busy(p0)
	busy(p1)
	if q := sc.queueOf(p(2)); !q.inline {
		t.Fatal("a third partition got a lane while both lanes' partitions are busy")
	}
	// The rebalance revokes partition 1: its queue drains and stays idle.
	idle(p1)
	q2 := sc.queueOf(p(2))
	if q2.inline {
		t.Fatal("partition 2 still runs inline though partition 1's lane is idle")
	}
	if sc.laned != 2 {
		t.Fatalf("laned = %d, want 2", sc.laned)
	}
	if _, ok := sc.keys[p(1)]; ok {
		t.Fatal("the idle partition 1 kept its queue after giving up its lane")
	}
	busy(q2)
	if q := sc.queueOf(p(3)); !q.inline {
		t.Fatal("a fourth partition got a lane while both lanes' partitions are busy")
	}
	if q := sc.queueOf(p(0)); q != p0 || q.inline {
		t.Fatal("partition 0 lost its lane while busy")
	}
}

// A laned partition with records queued or charged keeps its lane though
// no worker holds it: its records must not be overtaken inline.
func TestALaneWithRecordsQueuedIsKept(t *testing.T) {
	sc := &scheduler{n: 1, lanes: 1, keys: make(map[orderKey]*keyQueue)}
	p0 := sc.queueOf(orderKey{partition: 0})
	p0.bytes = 1 // a record of it still charges the bound
	if q := sc.queueOf(orderKey{partition: 1}); !q.inline {
		t.Fatal("partition 1 took the lane of partition 0, whose record is still in flight")
	}
	p0.bytes = 0
	p0.jobs = append(p0.jobs, keyJob{})
	if q := sc.queueOf(orderKey{partition: 1}); !q.inline {
		t.Fatal("partition 1 took the lane of partition 0, which has a record queued")
	}
	if sc.keys[orderKey{partition: 0}] != p0 || p0.inline {
		t.Fatal("partition 0 lost its lane with a record queued")
	}
}

// Serial has no lanes: every partition stays inline.
func TestSerialHasNoLanesToFree(t *testing.T) {
	sc := &scheduler{n: 1, lanes: 0, keys: make(map[orderKey]*keyQueue)}
	for range 2 {
		if q := sc.queueOf(orderKey{partition: 0}); !q.inline || sc.laned != 0 {
			t.Fatal("a partition got a lane under Serial")
		}
	}
}
