package runtime_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/wire"
)

// The PerConversation scheduler over the embedded log; the scenarios every
// transport must pass are in transporttest (perconversation.go).

// bodies records the bodies a handler finished, in the order it finished them.
type bodies struct {
	mu  sync.Mutex
	got []string
}

func (b *bodies) add(s string) {
	b.mu.Lock()
	b.got = append(b.got, s)
	b.mu.Unlock()
}

func (b *bodies) list() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.got...)
}

// of returns the bodies starting with prefix, in finishing order.
func (b *bodies) of(prefix string) []string {
	var out []string
	for _, s := range b.list() {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func TestPerConversationKeepsLogOrderWithinAConversation(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	convs := []wire.ID{conv(), conv(), conv()}
	var done bodies
	finished := make(chan struct{}, 64)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			done.add(string(c.Message().Body()))
			finished <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(8), PollBatch: 5},
	})
	for i := range 30 {
		plain(t, log, wire.Provenance{Conversation: convs[i%3]}, fmt.Sprintf("c%d-%02d", i%3, i/3))
	}
	for range 30 {
		recv(t, finished, "handled")
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	for c := range 3 {
		got := done.of(fmt.Sprintf("c%d-", c))
		for i, b := range got {
			if want := fmt.Sprintf("c%d-%02d", c, i); b != want {
				t.Fatalf("conversation %d handled %v: position %d is %s, want %s", c, got, i, b, want)
			}
		}
	}
}

func TestPerConversationRunsNHandlersAtOnce(t *testing.T) {
	const n = 4
	log := newLog(t, 1, clock.System{})
	// The barrier opens only once n handlers are inside at the same time:
	// with less parallelism than n it never opens and the test times out.
	var in atomic.Int32
	barrier := make(chan struct{})
	passed := make(chan struct{}, 2*n)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			if in.Add(1) == n {
				close(barrier)
			}
			select {
			case <-barrier:
			case <-c.Done():
				return c.Err()
			}
			passed <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(n)},
	})
	for i := range n {
		plain(t, log, wire.Provenance{Conversation: conv()}, fmt.Sprintf("m%d", i))
	}
	for range n {
		recv(t, passed, fmt.Sprintf("%d handlers of different conversations at once on one partition", n))
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

func TestPerConversationNeverRunsMoreThanNHandlers(t *testing.T) {
	const n = 3
	log := newLog(t, 1, clock.System{})
	var in, most atomic.Int32
	finished := make(chan struct{}, 64)
	release := make(chan struct{})
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			now := in.Add(1)
			for {
				m := most.Load()
				if now <= m || most.CompareAndSwap(m, now) {
					break
				}
			}
			<-release
			in.Add(-1)
			finished <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(n)},
	})
	for i := range 10 {
		plain(t, log, wire.Provenance{Conversation: conv()}, fmt.Sprintf("m%d", i))
	}
	transporttest.Eventually(t, waitLimit, "n handlers running", func() bool { return in.Load() == n })
	close(release)
	for range 10 {
		recv(t, finished, "handled")
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m != n {
		t.Fatalf("%d handlers ran at once, want at most and at least %d", m, n)
	}
}

func TestPerConversationWatermarkNeverPassesAnUnhandledRecord(t *testing.T) {
	log := newLog(t, 2, clock.System{})
	_ = log.EnsureTopics(context.Background(), 2, "probe")
	tr := transporttest.NewFaulty(log)
	release := make(chan struct{})
	finished := make(chan string, 16)
	r := start(t, tr, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			if b == "low" {
				<-release
			}
			finished <- b
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4)},
	})
	first := plain(t, log, wire.Provenance{Conversation: convOn(t, log, 0)}, "first")
	recv(t, finished, "first")
	low := plain(t, log, wire.Provenance{Conversation: convOn(t, log, 0)}, "low")
	var last runtime.Position
	for i := range 5 {
		last = plain(t, log, wire.Provenance{Conversation: convOn(t, log, 0)}, fmt.Sprintf("high%d", i))
	}
	for range 5 {
		recv(t, finished, "a higher record")
	}
	transporttest.Eventually(t, waitLimit, "the higher records finished", func() bool { n, _ := r.c.Queued(); return n == 1 })
	// A commit round after the higher records finished: partition 1's
	// record is committed in it, so a commit of partition 0 past the held
	// record would have happened by now.
	marker := plain(t, log, wire.Provenance{Conversation: convOn(t, log, 1)}, "marker")
	recv(t, finished, "marker")
	transporttest.Eventually(t, waitLimit, "partition 1 committed", func() bool {
		off, ok := stored(t, log, 1)
		return ok && off == marker.Offset
	})
	if off, ok := stored(t, log, 0); !ok || off != first.Offset {
		t.Fatalf("stored %d,%v while offset %d is unhandled, want %d", off, ok, low.Offset, first.Offset)
	}
	for _, c := range tr.Commits() {
		if c.Partition == 0 && c.Offset >= low.Offset {
			t.Fatalf("committed %d:%d while offset %d was unhandled", c.Partition, c.Offset, low.Offset)
		}
	}
	close(release)
	recv(t, finished, "low")
	transporttest.Eventually(t, waitLimit, "everything committed once the low record is handled", func() bool {
		off, ok := stored(t, log, 0)
		return ok && off == last.Offset
	})
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

func TestPerConversationPoisonHoldsOnlyItsConversation(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	poisoned, other := conv(), conv()
	var done bodies
	finished := make(chan string, 16)
	sink, dls := deadLetters()
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			if b == "poison" {
				return errBoom // retryable: backs off on the clock, then parked
			}
			done.add(b)
			finished <- b
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Clock: clock, Logger: quietLogger()}),
		Tuning: runtime.Tuning{
			Concurrency:    runtime.PerConversation(2),
			Retry:          runtime.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second},
			DeadLetterSink: sink,
		},
	})
	plain(t, log, wire.Provenance{Conversation: poisoned}, "poison")
	plain(t, log, wire.Provenance{Conversation: poisoned}, "after poison")
	for i := range 3 {
		plain(t, log, wire.Provenance{Conversation: other}, fmt.Sprintf("other%d", i))
	}
	// The poison waits out its first backoff; the other conversation goes on.
	for i := range 3 {
		if got := recv(t, finished, "the other conversation"); got != fmt.Sprintf("other%d", i) {
			t.Fatalf("handled %q", got)
		}
	}
	if got := done.of("after"); len(got) != 0 {
		t.Fatal("the poison's conversation went on before the poison was parked")
	}
	for range 2 { // two backoffs, then the third attempt parks it
		if err := clock.BlockUntil(t.Context(), 1); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Hour)
	}
	dl := recv(t, dls, "the poison parked")
	if string(dl.Capsule.Payload) != "poison" || dl.Capsule.Reason != wire.ReasonRetryExhausted {
		t.Fatalf("parked %q as %v", dl.Capsule.Payload, dl.Capsule.Reason)
	}
	if got := recv(t, finished, "the poison's conversation after it was parked"); got != "after poison" {
		t.Fatalf("handled %q", got)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

func TestPerConversationRetryBackoffOfOneConversationDoesNotBlockAnother(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	var attempts atomic.Int32
	finished := make(chan string, 16)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			if b == "flaky" && attempts.Add(1) == 1 {
				return errBoom
			}
			finished <- b
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Clock: clock, Logger: quietLogger()}),
		Tuning: runtime.Tuning{
			// One handler at a time: only a slot lent during the backoff
			// lets the other conversation run before the retry.
			Concurrency: runtime.PerConversation(1),
			Retry:       runtime.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Minute},
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv()}, "flaky")
	plain(t, log, wire.Provenance{Conversation: conv()}, "steady")
	if got := recv(t, finished, "the other conversation during the backoff"); got != "steady" {
		t.Fatalf("handled %q first", got)
	}
	if err := clock.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if got := recv(t, finished, "the retry"); got != "flaky" {
		t.Fatalf("handled %q", got)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

// claimDedup is a two-step Deduplicator kept in memory, as redisdedup keeps
// it in Redis: a key claimed by a message still in flight is reported as a
// transient failure, a completed one as a duplicate.
type claimDedup struct {
	mu       sync.Mutex
	state    map[string]string // "claimed" or "done"
	observed chan string
}

func (d *claimDedup) Observe(_ context.Context, key string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	defer func() {
		select {
		case d.observed <- key:
		default:
		}
	}()
	switch d.state[key] {
	case "claimed":
		return false, &runtime.Error{Code: runtime.CodeTransport, Msg: "dedup", Retryable: true, Err: errors.New("claimed by a message in flight")}
	case "done":
		return false, nil
	}
	d.state[key] = "claimed"
	return true, nil
}

func (d *claimDedup) Complete(_ context.Context, key string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.state[key] = "done"
	return nil
}

func TestPerConversationSameIdempotencyKeyInFlightRunsOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dedup func() (dedup.Deduplicator, chan string)
	}{
		{"window", func() (dedup.Deduplicator, chan string) { return nil, nil }},
		{"claims", func() (dedup.Deduplicator, chan string) {
			d := &claimDedup{state: map[string]string{}, observed: make(chan string, 64)}
			return d, d.observed
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := newLog(t, 1, clock.System{})
			dedup, observed := tc.dedup()
			var runs atomic.Int32
			entered, release := make(chan string, 4), make(chan struct{})
			finished := make(chan string, 4)
			r := start(t, log, runtime.ConsumerConfig{
				Agent: agent,
				Handler: handlerFunc(func(c *runtime.Ctx) error {
					b := string(c.Message().Body())
					if c.Message().Provenance.IdempotencyKey != "" {
						runs.Add(1)
						entered <- b
						<-release
					}
					finished <- b
					return nil
				}),
				Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4), Deduplicator: dedup},
			})
			// Two conversations, one key: the scheduler would run them in
			// parallel; dedup must let one through.
			plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, IdempotencyKey: "pay-1"}, "original")
			plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, IdempotencyKey: "pay-1"}, "copy")
			plain(t, log, wire.Provenance{Conversation: conv()}, "marker")
			// Either may win the key; the other must not run.
			first := recv(t, entered, "the first of the two")
			if got := recv(t, finished, "the marker"); got != "marker" {
				t.Fatal(got)
			}
			if observed != nil {
				// The copy asked the store while the original held the claim.
				recv(t, observed, "the first claim")
				recv(t, observed, "the second claim refused")
			} else {
				// The second was dropped: only the first holds the bound.
				transporttest.Eventually(t, waitLimit, "the second dropped", func() bool { n, _ := r.c.Queued(); return n == 1 })
			}
			select {
			case b := <-entered:
				t.Fatalf("%q ran while %q with the same key was in flight", b, first)
			default:
			}
			close(release)
			recv(t, finished, "the first")
			if err := r.shutdown(t); err != nil {
				t.Fatal(err)
			}
			if n := runs.Load(); n != 1 {
				t.Fatalf("the key ran %d times", n)
			}
			if off, _ := stored(t, log, 0); off != 2 {
				t.Fatalf("stored %d, want 2 (the second dropped, all committed)", off)
			}
		})
	}
}

func TestPerConversationGracefulStopFinishesWhatRunsAndCommitsTheWatermark(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	started := make(chan string, 8)
	release := make(chan struct{})
	var done bodies
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			started <- b
			if b != "quick" {
				<-release
			}
			done.add(b)
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(2)},
	})
	a, b := conv(), conv()
	plain(t, log, wire.Provenance{Conversation: a}, "quick")
	recv(t, started, "quick")
	plain(t, log, wire.Provenance{Conversation: a}, "a-slow")
	bSlow := plain(t, log, wire.Provenance{Conversation: b}, "b-slow")
	plain(t, log, wire.Provenance{Conversation: a}, "a-queued")
	for range 2 {
		recv(t, started, "the slow ones")
	}
	transporttest.Eventually(t, waitLimit, "a-queued taken in", func() bool { n, _ := r.c.Queued(); return n == 3 })
	close(r.stop)
	close(release)
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}
	got := done.list()
	if strings.Join(got, ",") != "quick,a-slow,b-slow" && strings.Join(got, ",") != "quick,b-slow,a-slow" {
		t.Fatalf("handled %v: the running records finish, the queued one does not start", got)
	}
	if off, ok := stored(t, log, 0); !ok || off != bSlow.Offset {
		t.Fatalf("stored %d,%v, want the watermark %d (a-queued left for the next owner)", off, ok, bSlow.Offset)
	}
}

func TestPerConversationGraceTimeoutCommitsNothingPastTheWatermark(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	held, release := make(chan struct{}), make(chan struct{})
	finished := make(chan string, 8)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			if b == "deaf" {
				close(held)
				<-release // ignores its cancellation
			}
			finished <- b
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Clock: clock, Logger: quietLogger()}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4), ShutdownGrace: time.Second},
	})
	before := plain(t, log, wire.Provenance{Conversation: conv()}, "before")
	recv(t, finished, "before")
	plain(t, log, wire.Provenance{Conversation: conv()}, "deaf")
	<-held
	after := plain(t, log, wire.Provenance{Conversation: conv()}, "after")
	recv(t, finished, "after")
	// The committer stores the watermark ('before') in the background once
	// intake moves on; wait for it, so the check below is about the grace
	// timeout and not about how far the committer got under load.
	for limit := time.Now().Add(10 * time.Second); ; goruntime.Gosched() {
		if off, ok := stored(t, log, 0); ok && off == before.Offset {
			break
		}
		if time.Now().After(limit) {
			t.Fatalf("the watermark at 'before' (%d) was never committed", before.Offset)
		}
	}
	close(r.stop)
	if err := clock.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := r.wait(t); runtime.CodeOf(err) != runtime.CodeTimeout {
		t.Fatalf("Run = %v, want CodeTimeout", err)
	}
	if off, ok := stored(t, log, 0); !ok || off != before.Offset {
		t.Fatalf("stored %d,%v after the grace ran out, want %d: 'after' (%d) lies past the unfinished 'deaf'", off, ok, before.Offset, after.Offset)
	}
	close(release)
	recv(t, finished, "deaf")
}

func TestPerConversationHotConversationDoesNotStarveOthers(t *testing.T) {
	// A queue of 8 records: the hot conversation's backlog fills it five
	// times over, within the span of 8×8.
	runHotBacklog(t, 40, 4)
}

// TestPerConversationHotBacklogPastTheSpanDoesNotFreezeThePartition puts
// a hot conversation's backlog far past what the partition may hold past
// its watermark (the span, 8 × MaxQueuedRecords = 64) ahead of another
// conversation's record.
func TestPerConversationHotBacklogPastTheSpanDoesNotFreezeThePartition(t *testing.T) {
	runHotBacklog(t, 500, 16)
}

// runHotBacklog publishes backlog records of one conversation, the first
// of which blocks until released, then one record of another, and runs a
// PerConversation(4) consumer with a queue of 8 records: the other record
// is handled while the hot conversation's first still runs, nothing is
// committed past that one meanwhile, and the hot backlog is then handled
// in order and committed.
func runHotBacklog(t *testing.T, backlog, pollBatch int) {
	t.Helper()
	log := newLog(t, 1, clock.System{})
	hot := conv()
	release := make(chan struct{})
	finished := make(chan string, backlog+1)
	var done bodies
	cfg := runtime.ConsumerConfig{
		Topic: topic, Group: agent, Agent: agent,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			b := string(ctx.Message().Body())
			if b == "hot-000" {
				<-release
			}
			done.add(b)
			finished <- b
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4), MaxQueuedRecords: 8, PollBatch: pollBatch},
	}
	c, err := runtime.NewConsumer(log, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range backlog {
		plain(t, log, wire.Provenance{Conversation: hot}, fmt.Sprintf("hot-%03d", i))
	}
	plain(t, log, wire.Provenance{Conversation: conv()}, "cold")
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- c.Run(t.Context(), nil, stop) }()
	if got := recv(t, finished, "the cold conversation behind the hot backlog"); got != "cold" {
		t.Fatalf("handled %q first", got)
	}
	if n, _ := c.Queued(); n > 8 {
		t.Fatalf("%d records queued, over the bound of 8", n)
	}
	if off, ok := stored(t, log, 0); ok && off != 0 {
		t.Fatalf("stored %d while the hot conversation's first record runs, want nothing past it", off)
	}
	close(release)
	for range backlog {
		recv(t, finished, "the hot backlog")
	}
	close(stop)
	if err := recv(t, errc, "Run"); err != nil {
		t.Fatal(err)
	}
	got := done.of("hot-")
	if len(got) != backlog {
		t.Fatalf("handled %d hot records, want %d", len(got), backlog)
	}
	for i, b := range got {
		if want := fmt.Sprintf("hot-%03d", i); b != want {
			t.Fatalf("hot conversation out of order at %d: %s, want %s", i, b, want)
		}
	}
	if off, _ := stored(t, log, 0); off != uint64(backlog) {
		t.Fatalf("stored %d, want %d", off, backlog)
	}
}

// TestPerConversationHotBacklogInLargePollsIsHandledInOrder polls the hot
// backlog in batches of 200, so intake leaves runs of the hot key to its
// backlog across several holds of the scheduler's lock within a batch.
func TestPerConversationHotBacklogInLargePollsIsHandledInOrder(t *testing.T) {
	runHotBacklog(t, 500, 200)
}

// TestPerConversationAHotBacklogNeverTakesTheKeysRecordOfAnotherPartition
// polls, in one batch, a hot conversation's records on partition 0 (over
// its share, so intake leaves them to a backlog there) followed by one
// record of the same conversation on partition 1: the backlog reads only
// partition 0 again, so that record must not be left to it; it is handled,
// and partition 1 is committed past it only once it was.
func TestPerConversationAHotBacklogNeverTakesTheKeysRecordOfAnotherPartition(t *testing.T) {
	log := newLog(t, 2, clock.System{})
	tp, _ := log.Topic(topic)
	var onP0, onP1 string
	for i := 0; onP0 == "" || onP1 == ""; i++ {
		k := fmt.Sprintf("key-%d", i)
		if tp.PartitionForKey([]byte(k)) == 0 {
			onP0 = cmp.Or(onP0, k)
		} else {
			onP1 = cmp.Or(onP1, k)
		}
	}
	hot := conv()
	headers, err := (&wire.Provenance{Conversation: hot}).Headers()
	if err != nil {
		t.Fatal(err)
	}
	publish := func(key, body string) {
		if _, err := log.Publish(t.Context(), topic, runtime.Outgoing{Key: key, Headers: headers, Payload: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	const backlog = 40
	for i := range backlog {
		publish(onP0, fmt.Sprintf("hot-%03d", i))
	}
	publish(onP1, "hot-p1")
	release := make(chan struct{})
	finished := make(chan string, backlog+1)
	cfg := runtime.ConsumerConfig{
		Topic: topic, Group: agent, Agent: agent,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			b := string(ctx.Message().Body())
			if b == "hot-000" {
				<-release
			}
			finished <- b
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4), MaxQueuedRecords: 8, PollBatch: 100},
	}
	c, err := runtime.NewConsumer(log, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- c.Run(t.Context(), nil, stop) }()
	close(release)
	seen := map[string]bool{}
	for range backlog + 1 {
		seen[recv(t, finished, "the conversation's records on both partitions")] = true
	}
	close(stop)
	if err := recv(t, errc, "Run"); err != nil {
		t.Fatal(err)
	}
	if !seen["hot-p1"] {
		t.Fatalf("the record on partition 1 was never handled")
	}
	if off, ok := stored(t, log, 1); !ok || off != 0 {
		t.Fatalf("stored %d (%v) on partition 1, want 0", off, ok)
	}
}

// TestPerConversationRecordsWithoutConversationKeepTheirOwnPartition polls
// two records with the same header bytes and no conversation (poison, so
// parked), one on each partition, in one batch: intake reuses a key for
// equal headers only on one partition, so the second record is not
// ordered behind the first, whose parking waits for it.
func TestPerConversationRecordsWithoutConversationKeepTheirOwnPartition(t *testing.T) {
	log := newLog(t, 2, clock.System{})
	parked := make(chan string, 2)
	other := make(chan struct{})
	cfg := runtime.ConsumerConfig{
		Topic: topic, Group: agent, Agent: agent,
		Handler: handlerFunc(func(*runtime.Ctx) error {
			t.Error("a record without a conversation reached the handler")
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
		Tuning: runtime.Tuning{
			Concurrency: runtime.PerConversation(4),
			DeadLetterSink: func(ctx context.Context, dl runtime.DeadLetter) {
				b := string(dl.Capsule.Payload)
				if b == "first" {
					select {
					case <-other:
					case <-ctx.Done():
					}
					parked <- b
				} else {
					parked <- b // before first is let go, so it is heard first
					close(other)
				}
			},
		},
	}
	c, err := runtime.NewConsumer(log, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// No key: the log places them round robin, the first on partition 0,
	// which the first poll reads first.
	for i, body := range []string{"first", "second"} {
		pos, err := log.Publish(t.Context(), topic, runtime.Outgoing{Payload: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		if pos[0].Partition != uint32(i) {
			t.Fatalf("%s placed on partition %d, want %d", body, pos[0].Partition, i)
		}
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- c.Run(t.Context(), nil, stop) }()
	if got := recv(t, parked, "the second partition's record"); got != "second" {
		t.Fatalf("parked %q first", got)
	}
	recv(t, parked, "the first partition's record")
	close(stop)
	if err := recv(t, errc, "Run"); err != nil {
		t.Fatal(err)
	}
}

func TestPerConversationOrderedByKeepsOrderPerKey(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	var done bodies
	finished := make(chan struct{}, 64)
	entity := func(m *runtime.Message) string {
		// The order id is the body's prefix up to the slash.
		b, _, _ := strings.Cut(string(m.Body()), "/")
		return b
	}
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			done.add(string(c.Message().Body()))
			finished <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(8).OrderedBy(entity)},
	})
	// Every record in a conversation of its own: only the key orders them.
	for i := range 24 {
		plain(t, log, wire.Provenance{Conversation: conv()}, fmt.Sprintf("order%d/%02d", i%3, i/3))
	}
	for range 24 {
		recv(t, finished, "handled")
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		for i, b := range done.of(fmt.Sprintf("order%d/", k)) {
			if want := fmt.Sprintf("order%d/%02d", k, i); b != want {
				t.Fatalf("key order%d out of order: %s at %d, want %s", k, b, i, want)
			}
		}
	}
}

func TestPerConversationWithLanesIsAConfigError(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	conc := runtime.PerConversation(4)
	conc.Lanes = 2
	_, err := runtime.NewConsumer(log, runtime.ConsumerConfig{Topic: topic, Group: agent, Handler: handlerFunc(func(*runtime.Ctx) error { return nil }),
		Tuning: runtime.Tuning{Concurrency: conc}})
	if runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("err = %v, want CodeConfig", err)
	}
}

func TestPerConversationHandlersThatTurnSlowStillRunNAtOnce(t *testing.T) {
	const n, warm = 8, 300
	log := newLog(t, 1, clock.System{})
	var in atomic.Int32
	barrier := make(chan struct{})
	finished := make(chan struct{}, warm+n)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			if strings.HasPrefix(string(c.Message().Body()), "slow") {
				// Only n handlers inside at once open it: after a run of
				// fast handlers the scheduler runs few workers, and must
				// start more once these stall.
				if in.Add(1) == n {
					close(barrier)
				}
				select {
				case <-barrier:
				case <-c.Done():
					return c.Err()
				}
			}
			finished <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(n)},
	})
	for i := range warm {
		plain(t, log, wire.Provenance{Conversation: conv()}, fmt.Sprintf("fast%d", i))
	}
	for range warm {
		recv(t, finished, "a fast record")
	}
	for i := range n {
		plain(t, log, wire.Provenance{Conversation: conv()}, fmt.Sprintf("slow%d", i))
	}
	for range n {
		recv(t, finished, fmt.Sprintf("%d slow handlers at once", n))
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

// TestPerConversationStopNeverCommitsPastAFailedBacklogRecord cuts off
// the handler of a hot conversation's backlogged record with a hard stop:
// settling the backlogs at the stop must start from that record, not from
// the read-ahead past it, so the stored offset stays below it.
func TestPerConversationStopNeverCommitsPastAFailedBacklogRecord(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	hot, cold := conv(), conv()
	release := make(chan struct{})
	coldDone := make(chan struct{}, 1)
	h3 := make(chan struct{}, 1)
	handled := make(chan string, 16)
	cfg := runtime.ConsumerConfig{
		Topic: topic, Group: agent, Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			switch b {
			case "hot-0":
				<-release
			case "cold":
				coldDone <- struct{}{}
			case "hot-3":
				h3 <- struct{}{}
				<-c.Done()
				return c.Err()
			}
			handled <- b
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4), MaxQueuedRecords: 4},
	}
	c, err := runtime.NewConsumer(log, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		plain(t, log, wire.Provenance{Conversation: hot}, fmt.Sprintf("hot-%d", i))
	}
	plain(t, log, wire.Provenance{Conversation: cold}, "cold") // 4
	plain(t, log, wire.Provenance{Conversation: hot}, "hot-5") // 5
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil, nil) }()
	recv(t, coldDone, "cold")
	close(release)
	recv(t, h3, "hot-3 started")
	cancel()
	if err := recv(t, done, "Run"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	if off, ok := stored(t, log, 0); ok && off >= 3 {
		t.Fatalf("stored %d: committed past hot-3 (offset 3), whose handler was cut off and never handled", off)
	}
}

// emptyReads answers its first armed ReadRange calls with no record, as a
// log that has not caught up (a lagging replica) may, though it holds them.
type emptyReads struct {
	runtime.Transport
	left atomic.Int32
}

func (e *emptyReads) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	if e.left.Add(-1) >= 0 {
		return nil, nil
	}
	return e.Transport.ReadRange(ctx, topic, partition, offset, count)
}

// TestPerConversationAnEmptyBacklogReadIsRetriedNotSkipped has the log
// answer the first reads of a hot conversation's backlog with nothing: no
// record was shown gone, so the backlog is read again and every record of
// it handled in order and committed, none skipped.
func TestPerConversationAnEmptyBacklogReadIsRetriedNotSkipped(t *testing.T) {
	const backlog = 40
	log := newLog(t, 1, clock.System{})
	tr := &emptyReads{Transport: log}
	hot := conv()
	release := make(chan struct{})
	finished := make(chan string, backlog+1)
	var done bodies
	cfg := runtime.ConsumerConfig{
		Topic: topic, Group: agent, Agent: agent,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			b := string(ctx.Message().Body())
			if b == "hot-000" {
				<-release
			}
			done.add(b)
			finished <- b
			return nil
		}),
		Client: runtime.NewClient(tr, runtime.ClientConfig{Logger: quietLogger()}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4), MaxQueuedRecords: 8, PollBatch: 16},
	}
	c, err := runtime.NewConsumer(tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range backlog {
		plain(t, log, wire.Provenance{Conversation: hot}, fmt.Sprintf("hot-%03d", i))
	}
	plain(t, log, wire.Provenance{Conversation: conv()}, "cold")
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- c.Run(t.Context(), nil, stop) }()
	if got := recv(t, finished, "the cold conversation behind the hot backlog"); got != "cold" {
		t.Fatalf("handled %q first", got)
	}
	tr.left.Store(3)
	close(release)
	for range backlog {
		recv(t, finished, "the hot backlog")
	}
	close(stop)
	if err := recv(t, errc, "Run"); err != nil {
		t.Fatal(err)
	}
	if tr.left.Load() >= 0 {
		t.Fatalf("the backlog was read %d times fewer than the empty answers armed", tr.left.Load()+1)
	}
	got := done.of("hot-")
	for i, b := range got {
		if want := fmt.Sprintf("hot-%03d", i); b != want {
			t.Fatalf("hot conversation out of order at %d: %s, want %s", i, b, want)
		}
	}
	if off, _ := stored(t, log, 0); off != backlog {
		t.Fatalf("stored %d, want %d", off, backlog)
	}
}

// rewinding hands the consumer, once armed, a batch read again from an
// earlier offset of partition 0, as a rebalance that handed the partition
// back does, followed by the record at marker (of another conversation,
// whose handling shows intake took the batch).
type rewinding struct {
	runtime.Transport
	from   atomic.Int64 // offset to read again from; -1: none
	count  int
	marker uint64
}

func (r *rewinding) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	sub, err := r.Transport.Join(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	return &rewindingSub{Subscription: sub, r: r, topic: topic}, nil
}

type rewindingSub struct {
	runtime.Subscription
	r     *rewinding
	topic string
}

func (s *rewindingSub) Poll(ctx context.Context, max int) ([]runtime.Incoming, error) {
	off := s.r.from.Swap(-1)
	if off < 0 {
		return s.Subscription.Poll(ctx, max)
	}
	recs, err := s.r.Transport.ReadRange(ctx, s.topic, 0, uint64(off), s.r.count)
	if err != nil {
		return nil, err
	}
	marker, err := s.r.Transport.ReadRange(ctx, s.topic, 0, s.r.marker, 1)
	return append(recs, marker...), err
}

// TestPerConversationABacklogEndsAtOnceWhenItsPartitionIsReadAgain hands
// a hot conversation's partition back (read again from an earlier offset)
// while its backlog holds records read ahead: the backlog ends at its next
// record, so what it read ahead is not handled out of order after the
// records delivered again.
func TestPerConversationABacklogEndsAtOnceWhenItsPartitionIsReadAgain(t *testing.T) {
	const backlog = 40
	log := newLog(t, 1, clock.System{})
	tr := &rewinding{Transport: log, count: 3}
	tr.from.Store(-1)
	coldAgain := make(chan struct{})
	var colds atomic.Int32
	hot := conv()
	release := make(chan struct{})
	atTen := make(chan struct{})
	resume := make(chan struct{})
	finished := make(chan string, 2*backlog)
	var done bodies
	var tenOnce sync.Once
	cfg := runtime.ConsumerConfig{
		Topic: topic, Group: agent, Agent: agent,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			b := string(ctx.Message().Body())
			switch b {
			case "hot-000":
				<-release
			case "hot-010":
				tenOnce.Do(func() {
					close(atTen)
					<-resume
				})
			case "cold":
				if colds.Add(1) == 2 {
					close(coldAgain)
				}
			}
			done.add(b)
			finished <- b
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4), MaxQueuedRecords: 8, PollBatch: 16},
	}
	c, err := runtime.NewConsumer(tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range backlog {
		plain(t, log, wire.Provenance{Conversation: hot}, fmt.Sprintf("hot-%03d", i))
	}
	tr.marker = plain(t, log, wire.Provenance{Conversation: conv()}, "cold").Offset
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- c.Run(t.Context(), nil, stop) }()
	if got := recv(t, finished, "the cold conversation behind the hot backlog"); got != "cold" {
		t.Fatalf("handled %q first", got)
	}
	close(release)
	recv(t, atTen, "hot-010, read back from the backlog")
	tr.from.Store(5)
	recv(t, coldAgain, "intake taking hot-005..hot-007 and the cold record again")
	close(resume)
	for n := 0; n < 11+3; { // hot-000..hot-010, and hot-005..hot-007 again
		if strings.HasPrefix(recv(t, finished, "the hot records"), "hot-") {
			n++
		}
	}
	close(stop)
	if err := recv(t, errc, "Run"); err != nil {
		t.Fatal(err)
	}
	got := done.of("hot-")
	at := slices.Index(got, "hot-010")
	if want := []string{"hot-010", "hot-005", "hot-006", "hot-007"}; !slices.Equal(got[at:], want) {
		t.Fatalf("handled %v from hot-010 on, want %v: the stale read-ahead ran after the partition was read again", got[at:], want)
	}
}

// TestPerConversationABacklogEndsOnceItsPartitionMovedToAnotherMember has
// the commit of a hot conversation's backlog mark refused with
// ErrPartitionLost while one of its records runs: the backlog's records
// belong to the partition's new owner, so it handles none after that one.
func TestPerConversationABacklogEndsOnceItsPartitionMovedToAnotherMember(t *testing.T) {
	const backlog = 40
	log := newLog(t, 2, clock.System{})
	tr := transporttest.NewFaulty(log)
	hot := conv()
	var hotPart uint32
	for i := range backlog {
		hotPart = plain(t, log, wire.Provenance{Conversation: hot}, fmt.Sprintf("hot-%03d", i)).Partition
	}
	// A record of another conversation behind the backlog lets the mark
	// pass the records intake took, up to the backlog's pin.
	var cold wire.ID
	for {
		if cold = conv(); plain(t, log, wire.Provenance{Conversation: cold}, "cold").Partition == hotPart {
			break
		}
	}
	refused := make(chan struct{}, 1)
	other := make(chan struct{}, 1)
	var wasRefused atomic.Bool
	tr.FailCommit(func(partition uint32, offset uint64) error {
		if partition != hotPart {
			if !wasRefused.Load() {
				return nil
			}
			select {
			case other <- struct{}{}:
			default:
			}
			return nil
		}
		if offset < 9 {
			return nil
		}
		wasRefused.Store(true)
		select {
		case refused <- struct{}{}:
		default:
		}
		return runtime.ErrPartitionLost
	})
	atTen := make(chan struct{})
	resume := make(chan struct{})
	coldDone := make(chan struct{})
	finished := make(chan string, 4*backlog)
	var done bodies
	cfg := runtime.ConsumerConfig{
		Topic: topic, Group: agent, Agent: agent,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			b := string(ctx.Message().Body())
			switch {
			case ctx.Message().Provenance.Conversation == cold:
				close(coldDone)
			case b == "hot-009":
				// The mark reaches 9, and its commit is refused, only
				// once intake took every record: none is read after
				// the loss, so any hot record handled after hot-010
				// would be the backlog's.
				<-coldDone
			case b == "hot-010":
				close(atTen)
				<-resume
			}
			done.add(b)
			finished <- b
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4), MaxQueuedRecords: 8, PollBatch: 16},
	}
	c, err := runtime.NewConsumer(tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- c.Run(t.Context(), nil, stop) }()
	recv(t, atTen, "hot-010, read back from the backlog")
	recv(t, refused, "the refused commit of the mark below hot-010")
	// A commit of the other partition that starts after the refusal runs
	// on the committer once the refused one finished: the refusal was
	// heard by then.
	for plain(t, log, wire.Provenance{Conversation: conv()}, "probe").Partition == hotPart {
	}
	recv(t, other, "a commit of the other partition")
	close(resume)
	for b := recv(t, finished, "hot-010"); b != "hot-010"; b = recv(t, finished, "hot-010") {
	}
	close(stop)
	if err := recv(t, errc, "Run"); err != nil {
		t.Fatal(err)
	}
	got := done.of("hot-")
	if want := 11; len(got) != want || got[len(got)-1] != "hot-010" {
		t.Fatalf("handled %v, want hot-000..hot-010 and none of the backlog after the partition moved", got)
	}
}
