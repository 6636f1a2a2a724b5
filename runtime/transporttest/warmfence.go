package transporttest

import (
	"testing"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// scenarioWarmDedupRestoresTheFence pins a documented deviation: warm dedup
// replays the consumed tail through the fence gate too, so after a warm
// restart a message from a superseded holder (a fence below the
// pre-restart high-water) is dropped and committed, where the reference,
// whose fence map starts empty, would handle it. Without WarmDedup the map
// starts empty, as in the reference.
func scenarioWarmDedupRestoresTheFence(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	fence := func(v uint64) *uint64 { return &v }
	c := w.conv()
	warm := func(cfg *runtime.ConsumerConfig) { cfg.WarmDedup = true }
	k := w.start(tr, warm)
	w.send(wire.Provenance{Conversation: c, Fence: fence(5)}, "holder-5")
	w.expect(1)
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}

	k = w.start(tr, warm)
	stale := w.send(wire.Provenance{Conversation: c, Fence: fence(3)}, "stale-3")
	w.send(wire.Provenance{Conversation: c, Fence: fence(5)}, "holder-5-again")
	if got := w.expect(1); got[0] != "holder-5-again" {
		t.Fatalf("handled %v after a warm restart, want the stale fence dropped", got)
	}
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	if got := w.stored(); got[stale.Partition] != stale.Offset+1 {
		t.Fatalf("stored %v, want the dropped stale record committed", got)
	}

	k = w.start(tr, nil) // a cold start forgets the high-water
	w.send(wire.Provenance{Conversation: c, Fence: fence(2)}, "cold-2")
	if got := w.expect(1); got[0] != "cold-2" {
		t.Fatalf("handled %v after a cold restart", got)
	}
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	w.nothingMore()
}
