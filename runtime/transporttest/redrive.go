package transporttest

import (
	"fmt"
	"testing"

	"github.com/lasergo/laser/deadletter"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// scenarioRedrive parks a poison message, checks Consumed reports it,
// redrives its capsule twice through the library, and refuses a forged
// capsule: the first copy (re-keyed) is handled again and parked again at
// its own position, the second copy of the same capsule is a duplicate.
func scenarioRedrive(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	client := w.client()
	k := w.start(tr, nil)
	c := w.conv()
	poison := w.send(wire.Provenance{Conversation: c, Agent: "shop", IdempotencyKey: "k"}, "poison")
	first := w.deadLetter()
	w.send(wire.Provenance{Conversation: c}, "after")
	w.expect(1)
	// Offsets are committed behind the handler, so the group's stored offset
	// reaches the parked record a moment after "after" was handled.
	Eventually(t, Within, "Consumed(parked poison)", func() bool {
		ok, err := client.Consumed(w.ctx, w.topic, w.group, poison)
		return err == nil && ok
	})
	if ok, err := client.Consumed(w.ctx, w.topic, w.group, runtime.Position{Partition: poison.Partition, Offset: poison.Offset + 100}); err != nil || ok {
		t.Fatalf("Consumed(a record not yet written) = %v, %v; want false", ok, err)
	}

	copy1, err := deadletter.Redrive(w.ctx, client, w.topic, first.Capsule)
	if err != nil {
		t.Fatal(err)
	}
	second := w.deadLetter()
	if second.Capsule.Source.Offset != copy1.Offset || second.Message.Provenance.IdempotencyKey != fmt.Sprintf("k/redrive/%d-%d", first.Capsule.Source.PartitionID, first.Capsule.Source.Offset) {
		t.Fatalf("second capsule from %s with key %q, want from the copy at %s with a re-keyed key",
			second.Capsule.Source, second.Message.Provenance.IdempotencyKey, copy1)
	}
	copy2, err := deadletter.Redrive(w.ctx, client, w.topic, first.Capsule)
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, Within, "the second copy consumed", func() bool {
		ok, err := client.Consumed(w.ctx, w.topic, w.group, copy2)
		return err == nil && ok
	})
	forged := *first.Capsule
	forged.Source.TopicID++
	if _, err := deadletter.Redrive(w.ctx, client, w.topic, &forged); runtime.CodeOf(err) != runtime.CodeInvalid {
		t.Fatalf("redrive of a foreign capsule = %v, want CodeInvalid", err)
	}
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	if n := len(w.capsules()); n != 2 {
		t.Fatalf("%d capsules, want 2: redriving one capsule twice must dedup", n)
	}
}
