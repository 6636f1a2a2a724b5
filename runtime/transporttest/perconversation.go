package transporttest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The PerConversation scheduler's rules over a transport: what the
// embedded log shows in runtime's own tests must hold on every log.

// perConversation sets the scheduler on a consumer config.
func perConversation(n int) func(*runtime.ConsumerConfig) {
	return func(c *runtime.ConsumerConfig) { c.Concurrency = runtime.PerConversation(n) }
}

// blocking returns a handler that reports each body it finishes to w and
// waits on release first for the bodies hold names.
func (w *world) blocking(release <-chan struct{}, hold ...string) runtime.Handler {
	return runtime.HandlerFunc(func(c *runtime.Ctx) error {
		body := string(c.Message().Body())
		if slices.Contains(hold, body) {
			select {
			case <-release:
			case <-c.Done():
				return c.Err()
			}
		}
		w.handled <- body
		return nil
	})
}

// scenarioPerConversationOrderAndParallelism: on one partition, n handlers
// of different conversations run at once (a barrier opens only when n are
// inside), and each conversation's records are handled in log order.
func scenarioPerConversationOrderAndParallelism(t *testing.T, tr runtime.Transport) {
	const n, convs, each = 4, 4, 5
	w := newWorld(t, tr, 1)
	ids := make([]wire.ID, convs)
	for i := range ids {
		ids[i] = w.conv()
	}
	for r := range each {
		for c := range convs {
			w.send(wire.Provenance{Conversation: ids[c]}, fmt.Sprintf("c%d-%d", c, r))
		}
	}
	var in atomic.Int32
	barrier := make(chan struct{})
	k := w.start(tr, func(cfg *runtime.ConsumerConfig) {
		cfg.Concurrency = runtime.PerConversation(n)
		cfg.Handler = runtime.HandlerFunc(func(c *runtime.Ctx) error {
			// The first record of every conversation waits for the others.
			if strings.HasSuffix(string(c.Message().Body()), "-0") {
				if in.Add(1) == n {
					close(barrier)
				}
				select {
				case <-barrier:
				case <-c.Done():
					return c.Err()
				}
			}
			w.handled <- string(c.Message().Body())
			return nil
		})
	})
	got := w.expect(convs * each)
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	next := map[byte]int{}
	for _, b := range got {
		if want := fmt.Sprintf("c%c-%d", b[1], next[b[1]]); b != want {
			t.Fatalf("handled %s, want %s next: %v", b, want, got)
		}
		next[b[1]]++
	}
	if st := w.stored(); st[0] != convs*each-1 {
		t.Fatalf("stored %v, want %d", st, convs*each-1)
	}
}

// scenarioPerConversationWatermark: a held record keeps the committed
// offset below it while the records after it are handled; once it is
// handled the offset moves to the end.
func scenarioPerConversationWatermark(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	faulty := NewFaulty(tr)
	release := make(chan struct{})
	k := w.start(faulty, func(cfg *runtime.ConsumerConfig) {
		cfg.Concurrency = runtime.PerConversation(4)
		cfg.Handler = w.blocking(release, "low")
	})
	first := w.send(wire.Provenance{Conversation: w.conv()}, "first")
	w.expect(1)
	low := w.send(wire.Provenance{Conversation: w.conv()}, "low")
	var last runtime.Position
	for i := range 5 {
		last = w.send(wire.Provenance{Conversation: w.conv()}, fmt.Sprintf("high%d", i))
	}
	w.expect(5)
	Eventually(t, Within, "the first record committed", func() bool {
		st, ok := w.storedOK()
		return ok && st[0] == first.Offset
	})
	for _, c := range faulty.Commits() {
		if c.Offset >= low.Offset {
			t.Fatalf("committed %d while offset %d was unhandled", c.Offset, low.Offset)
		}
	}
	close(release)
	if got := w.expect(1); got[0] != "low" {
		t.Fatal(got)
	}
	Eventually(t, Within, "the end committed once the low record is handled", func() bool {
		st, ok := w.storedOK()
		return ok && st[0] == last.Offset
	})
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
}

// storedOK is stored that may be asked before anything is committed.
func (w *world) storedOK() (map[uint32]uint64, bool) {
	st := w.stored()
	return st, len(st) > 0
}

// scenarioPerConversationPoison: a poison record is parked without
// holding the other conversations of its partition, and the records of
// its own conversation behind it are handled after it, in order.
func scenarioPerConversationPoison(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	bad, good := w.conv(), w.conv()
	w.send(wire.Provenance{Conversation: bad}, "poison 1")
	w.send(wire.Provenance{Conversation: bad}, "bad-after")
	for i := range 3 {
		w.send(wire.Provenance{Conversation: good}, fmt.Sprintf("good%d", i))
	}
	k := w.start(tr, perConversation(4))
	if dl := w.deadLetter(); string(dl.Capsule.Payload) != "poison 1" {
		t.Fatalf("parked %q", dl.Capsule.Payload)
	}
	got := w.expect(4)
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	var goods []string
	for _, b := range got {
		if strings.HasPrefix(b, "good") {
			goods = append(goods, b)
		}
	}
	if strings.Join(goods, ",") != "good0,good1,good2" || !slices.Contains(got, "bad-after") {
		t.Fatalf("handled %v", got)
	}
	if st := w.stored(); st[0] != 4 {
		t.Fatalf("stored %v, want 4", st)
	}
}

// scenarioPerConversationSameKeyInFlight: two records with one
// idempotency key in different conversations, which the scheduler runs in
// parallel: one runs, the other is dropped, even while the first is still
// in flight.
func scenarioPerConversationSameKeyInFlight(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	var runs atomic.Int32
	release := make(chan struct{})
	k := w.start(tr, func(cfg *runtime.ConsumerConfig) {
		cfg.Concurrency = runtime.PerConversation(4)
		cfg.Handler = runtime.HandlerFunc(func(c *runtime.Ctx) error {
			if c.Message().Provenance.IdempotencyKey != "" {
				runs.Add(1)
				<-release
			}
			w.handled <- string(c.Message().Body())
			return nil
		})
	})
	w.send(wire.Provenance{Conversation: w.conv(), Agent: "shop", IdempotencyKey: "pay-1"}, "one")
	w.send(wire.Provenance{Conversation: w.conv(), Agent: "shop", IdempotencyKey: "pay-1"}, "two")
	marker := w.send(wire.Provenance{Conversation: w.conv()}, "marker")
	if got := w.expect(1); got[0] != "marker" {
		t.Fatal(got)
	}
	close(release)
	w.expect(1)
	Eventually(t, Within, "everything committed", func() bool {
		st, ok := w.storedOK()
		return ok && st[0] == marker.Offset
	})
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("the key ran %d times", n)
	}
	w.nothingMore()
}

// scenarioPerConversationDrain: a graceful stop finishes the records that
// run, starts no queued one, and commits the watermark.
func scenarioPerConversationDrain(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	a, b := w.conv(), w.conv()
	started := make(chan string, 8)
	release := make(chan struct{})
	k := w.start(tr, func(cfg *runtime.ConsumerConfig) {
		cfg.Concurrency = runtime.PerConversation(2)
		cfg.Handler = runtime.HandlerFunc(func(c *runtime.Ctx) error {
			body := string(c.Message().Body())
			started <- body
			<-release
			w.handled <- body
			return nil
		})
	})
	w.send(wire.Provenance{Conversation: a}, "a0")
	bRun := w.send(wire.Provenance{Conversation: b}, "b0")
	w.send(wire.Provenance{Conversation: a}, "a1")
	for range 2 {
		<-started
	}
	close(k.stop)
	close(release)
	if err := w.result(k); err != nil {
		t.Fatal(err)
	}
	if got := w.expect(2); !slices.Contains(got, "a0") || !slices.Contains(got, "b0") {
		t.Fatalf("handled %v", got)
	}
	w.nothingMore()
	if st := w.stored(); st[0] != bRun.Offset {
		t.Fatalf("stored %v, want %d: what ran is committed, a1 is left for the next owner", st, bRun.Offset)
	}
}

// scenarioPerConversationRebalance: a member with records in flight loses
// partitions to a second member that joins; once both stop, every record
// was handled at least once and every partition is committed to its end.
func scenarioPerConversationRebalance(t *testing.T, tr runtime.Transport) {
	const partitions, records = 4, 40
	w := newWorld(t, tr, partitions)
	last := map[uint32]uint64{}
	var hold []string
	for i := range records {
		body := fmt.Sprintf("m%02d", i)
		pos := w.send(wire.Provenance{Conversation: w.conv()}, body)
		last[pos.Partition] = pos.Offset
		if i%10 == 3 {
			hold = append(hold, body)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	count := func(h runtime.Handler) runtime.Handler {
		return runtime.HandlerFunc(func(c *runtime.Ctx) error {
			err := h.Handle(c)
			mu.Lock()
			seen[string(c.Message().Body())]++
			mu.Unlock()
			return err
		})
	}
	release := make(chan struct{})
	first := w.start(tr, func(cfg *runtime.ConsumerConfig) {
		cfg.Concurrency = runtime.PerConversation(8)
		cfg.Handler = count(w.blocking(release, hold...))
	})
	w.expect(records - len(hold))
	second := w.start(tr, func(cfg *runtime.ConsumerConfig) {
		cfg.Concurrency = runtime.PerConversation(8)
		cfg.Handler = count(w.blocking(nil))
	})
	close(release)
	Eventually(t, Within, "every partition committed to its end", func() bool {
		st := w.stored()
		for p, off := range last {
			if st[p] != off {
				return false
			}
		}
		return true
	})
	for _, k := range []*consumer{first, second} {
		if err := w.shutdown(k); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range records {
		if b := fmt.Sprintf("m%02d", i); seen[b] == 0 {
			t.Fatalf("%s was never handled", b)
		}
	}
}

// scenarioPerConversationHotBacklog: a conversation whose backlog is
// many times the queue bound and past the span a partition may hold past
// its watermark (8 × MaxQueuedRecords), stuck on its first record, neither
// fills the queue nor holds a later conversation; its records past its
// share are read from the log again and handled in order.
func scenarioPerConversationHotBacklog(t *testing.T, tr runtime.Transport) {
	const backlog = 100 // the span is 32
	w := newWorld(t, tr, 1)
	hot := w.conv()
	for i := range backlog {
		w.send(wire.Provenance{Conversation: hot}, fmt.Sprintf("hot-%03d", i))
	}
	cold := w.send(wire.Provenance{Conversation: w.conv()}, "cold")
	release := make(chan struct{})
	k := w.start(tr, func(cfg *runtime.ConsumerConfig) {
		cfg.Concurrency = runtime.PerConversation(2)
		cfg.MaxQueuedRecords = 4
		cfg.PollBatch = 3
		cfg.Handler = w.blocking(release, "hot-000")
	})
	if got := w.expect(1); got[0] != "cold" {
		t.Fatalf("handled %v first, want the cold conversation", got)
	}
	close(release)
	got := w.expect(backlog)
	for i, b := range got {
		if want := fmt.Sprintf("hot-%03d", i); b != want {
			t.Fatalf("hot conversation out of order at %d: %s, want %s", i, b, want)
		}
	}
	Eventually(t, Within, "everything committed", func() bool {
		st, ok := w.storedOK()
		return ok && st[0] == cold.Offset
	})
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
}
