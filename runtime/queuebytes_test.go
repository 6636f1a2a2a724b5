package runtime_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/wire"
)

// TestLanesByteBoundStallsIntakeAndReleasesOnceInOrder pins MaxQueuedBytes
// as the reference does: a 64 KiB bound with 40 KiB records. A blocked
// 40 KiB record holds its bytes; the next 40 KiB record (on another
// partition) does not fit, so intake stalls for every partition, even for
// one-byte records; after the release everything is handled exactly once,
// in partition order.
func TestLanesByteBoundStallsIntakeAndReleasesOnceInOrder(t *testing.T) {
	log := newLog(t, 3, clock.System{})
	_ = log.EnsureTopics(context.Background(), 3, "probe")
	convs := []wire.ID{convOn(t, log, 0), convOn(t, log, 1), convOn(t, log, 2)}
	tr := &countingPolls{Transport: log}
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	order := map[uint32][]string{}
	counts := map[string]int{}
	handled := make(chan struct{}, 16)
	r := start(t, tr, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := c.Message().Body()
			name := string(b)
			if len(b) > 64 {
				name = string(b[:bytes.IndexByte(b, ' ')])
			}
			if name == "block" {
				close(started)
				<-release
			}
			mu.Lock()
			order[c.Message().Position.Partition] = append(order[c.Message().Position.Partition], name)
			counts[name]++
			mu.Unlock()
			handled <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{
			Concurrency:    runtime.PerPartition(3),
			MaxQueuedBytes: 64 << 10,
			PollBatch:      1,
		},
	})
	big := func(name string) string { return name + " " + strings.Repeat("x", 40<<10) }
	plain(t, log, wire.Provenance{Conversation: convs[0]}, big("block"))
	recv(t, started, "the blocker")
	plain(t, log, wire.Provenance{Conversation: convs[1]}, big("p1-big"))
	transporttest.Eventually(t, waitLimit, "the second 40 KiB record polled", func() bool { return tr.records() >= 2 })
	for i := range 3 {
		plain(t, log, wire.Provenance{Conversation: convs[2]}, fmt.Sprintf("p2-%d", i))
	}
	// The intake waits for byte capacity: it lets nothing through while the
	// blocker holds 40 of the 64 KiB, and the poller reads at most one
	// further batch ahead (here one record), never more.
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	stalled := len(counts)
	mu.Unlock()
	if polled := tr.records(); stalled != 0 || polled < 2 || polled > 3 {
		t.Fatalf("%d handled and %d polled while the byte bound was full, want 0 and 2 (3 with the batch read ahead)", stalled, polled)
	}
	close(release)
	for range 5 {
		recv(t, handled, "handled after release")
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for name, n := range counts {
		if n != 1 {
			t.Fatalf("%s handled %d times", name, n)
		}
	}
	for p, want := range []string{"block", "p1-big", "p2-0,p2-1,p2-2"} {
		if got := strings.Join(order[uint32(p)], ","); got != want {
			t.Fatalf("partition %d order %s, want %s", p, got, want)
		}
	}
}
