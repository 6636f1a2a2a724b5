package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/wire"
)

// keyFor returns a conversation whose partition key lands on partition p of
// an n-partition topic (found by publishing probes nowhere but asking the log).
func convOn(t *testing.T, tr runtime.Transport, p uint32) wire.ID {
	t.Helper()
	for i := 0; i < 10_000; i++ {
		c := conv()
		pos, err := tr.Publish(context.Background(), "probe", runtime.Outgoing{Key: wire.PartitionKey(c), Payload: []byte("p")})
		if err != nil {
			t.Fatal(err)
		}
		if pos[0].Partition == p {
			return c
		}
	}
	t.Fatalf("no conversation lands on partition %d", p)
	return wire.ID{}
}

func TestLanesBlockedPartitionDoesNotStopAnother(t *testing.T) {
	log := newLog(t, 2, clock.System{})
	_ = log.EnsureTopics(context.Background(), 2, "probe")
	slow, fast := convOn(t, log, 0), convOn(t, log, 1)
	release := make(chan struct{})
	got := make(chan string, 4)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			if b == "slow" {
				<-release
			}
			got <- b
			return nil
		}),
		Tuning: runtime.Tuning{
			Concurrency: runtime.PerPartition(2),
		},
	})
	plain(t, log, wire.Provenance{Conversation: slow}, "slow")
	plain(t, log, wire.Provenance{Conversation: fast}, "fast")
	if b := recv(t, got, "fast message"); b != "fast" {
		t.Fatalf("handled %q first; the blocked lane held the other partition", b)
	}
	close(release)
	if b := recv(t, got, "slow message"); b != "slow" {
		t.Fatal(b)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

func TestLanesGlobalQueueBoundStallsIntakeAndReleasesOnceInOrder(t *testing.T) {
	log := newLog(t, 3, clock.System{})
	_ = log.EnsureTopics(context.Background(), 3, "probe")
	convs := []wire.ID{convOn(t, log, 0), convOn(t, log, 1), convOn(t, log, 2)}
	tr := &countingPolls{Transport: log}
	release := make(chan struct{})
	var mu sync.Mutex
	order := map[uint32][]string{}
	counts := map[string]int{}
	handled := make(chan struct{}, 64)
	r := start(t, tr, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			if b == "block" {
				<-release
			}
			mu.Lock()
			order[c.Message().Position.Partition] = append(order[c.Message().Position.Partition], b)
			counts[b]++
			mu.Unlock()
			handled <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{
			Concurrency:      runtime.PerPartition(3),
			MaxQueuedRecords: 3,
			PollBatch:        1,
		},
	})
	// The blocker and two more on partition 0 fill the bound of 3 records.
	plain(t, log, wire.Provenance{Conversation: convs[0]}, "block")
	plain(t, log, wire.Provenance{Conversation: convs[0]}, "p0-1")
	plain(t, log, wire.Provenance{Conversation: convs[0]}, "p0-2")
	transporttest.Eventually(t, waitLimit, "partition 0 taken in", func() bool { return tr.records() >= 3 })
	// A flood on the other partitions cannot get in while the bound is full.
	var want []string
	for i := 0; i < 12; i++ {
		p := 1 + i%2
		body := fmt.Sprintf("p%d-%d", p, i)
		plain(t, log, wire.Provenance{Conversation: convs[p]}, body)
		want = append(want, body)
	}
	// Once intake has polled a flood record it cannot queue it: the bound is
	// held by partition 0, so nothing of the flood may be handled.
	transporttest.Eventually(t, waitLimit, "a flood record polled", func() bool { return tr.records() >= 4 })
	mu.Lock()
	stalled := len(counts)
	mu.Unlock()
	if stalled != 0 {
		t.Fatalf("%d messages handled while the bound was full", stalled)
	}
	close(release)
	for range 3 + len(want) {
		recv(t, handled, "handled after release")
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for body, n := range counts {
		if n != 1 {
			t.Fatalf("%s handled %d times", body, n)
		}
	}
	if got := strings.Join(order[0], ","); got != "block,p0-1,p0-2" {
		t.Fatalf("partition 0 order %s", got)
	}
	for p := uint32(1); p <= 2; p++ {
		var exp []string
		for _, b := range want {
			if strings.HasPrefix(b, fmt.Sprintf("p%d-", p)) {
				exp = append(exp, b)
			}
		}
		if got := strings.Join(order[p], ","); got != strings.Join(exp, ",") {
			t.Fatalf("partition %d order %s, want %s", p, got, strings.Join(exp, ","))
		}
	}
}

// TestLanesBeyondTheCapAreHandledInline blocks the one lane of
// PerPartition(1) on its partition's record: a partition beyond the cap is
// processed inline by the poller (runtime-semantics §13 item 8), so its
// records are handled while the lane is blocked instead of waiting for it.
func TestLanesBeyondTheCapAreHandledInline(t *testing.T) {
	log := newLog(t, 2, clock.System{})
	_ = log.EnsureTopics(context.Background(), 2, "probe")
	laned, beyond := convOn(t, log, 0), convOn(t, log, 1)
	blocked, release := make(chan struct{}), make(chan struct{})
	got := make(chan string, 8)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			if b == "block" {
				close(blocked)
				<-release
			}
			got <- b
			return nil
		}),
		Tuning: runtime.Tuning{
			Concurrency: runtime.PerPartition(1),
		},
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	// Partition 0 is the first the consumer sees: it takes the one lane,
	// and its handler holds it.
	blockAt := plain(t, log, wire.Provenance{Conversation: laned}, "block")
	recv(t, blocked, "the lane's handler")
	var last runtime.Position
	for i := range 3 {
		last = plain(t, log, wire.Provenance{Conversation: beyond}, fmt.Sprintf("beyond-%d", i))
	}
	for i := range 3 {
		if b := recv(t, got, "a record beyond the cap, while the lane is blocked"); b != fmt.Sprintf("beyond-%d", i) {
			t.Fatalf("handled %q, want beyond-%d", b, i)
		}
	}
	close(release)
	if b := recv(t, got, "the lane's record"); b != "block" {
		t.Fatal(b)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if off, ok := stored(t, log, 1); !ok || off != last.Offset {
		t.Fatalf("partition 1 stored %d,%v want %d", off, ok, last.Offset)
	}
	if off, ok := stored(t, log, 0); !ok || off != blockAt.Offset {
		t.Fatalf("partition 0 stored %d,%v want %d", off, ok, blockAt.Offset)
	}
}

// TestLanesBeyondTheCapCommitEveryPartition runs three partitions on one
// lane: every record, on the lane or inline, is handled once and
// committed.
func TestLanesBeyondTheCapCommitEveryPartition(t *testing.T) {
	log := newLog(t, 3, clock.System{})
	_ = log.EnsureTopics(context.Background(), 3, "probe")
	var mu sync.Mutex
	seen := map[string]int{}
	done := make(chan struct{}, 32)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			mu.Lock()
			seen[string(c.Message().Body())]++
			mu.Unlock()
			done <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{
			Concurrency: runtime.PerPartition(1),
		},
	})
	last := map[uint32]runtime.Position{}
	for p := uint32(0); p < 3; p++ {
		c := convOn(t, log, p)
		for i := 0; i < 3; i++ {
			last[p] = plain(t, log, wire.Provenance{Conversation: c}, fmt.Sprintf("p%d-%d", p, i))
		}
	}
	for range 9 {
		recv(t, done, "handled")
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 9 {
		t.Fatalf("handled %d distinct, want 9", len(seen))
	}
	for p, pos := range last {
		if off, ok := stored(t, log, p); !ok || off != pos.Offset {
			t.Fatalf("partition %d stored %d,%v want %d", p, off, ok, pos.Offset)
		}
	}
}

// TestLanesGracefulShutdownCommitsWhatWasHandled stops a lane with records
// queued behind a running one: what was handled is committed, nothing
// past it.
func TestLanesGracefulShutdownCommitsWhatWasHandled(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var bodies []string
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			if b == "m0" {
				close(started)
				<-release
			}
			mu.Lock()
			bodies = append(bodies, b)
			mu.Unlock()
			return nil
		}),
		Tuning: runtime.Tuning{
			Concurrency: runtime.PerPartition(2),
			PollBatch:   10,
		},
	})
	c := conv()
	var last runtime.Position
	for i := 0; i < 5; i++ {
		last = plain(t, log, wire.Provenance{Conversation: c}, fmt.Sprintf("m%d", i))
	}
	recv(t, started, "first handler")
	close(r.stop)
	close(release)
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// What was handled when the stop came is committed, and no more.
	if off, ok := stored(t, log, 0); !ok || int(off) != len(bodies)-1 {
		t.Fatalf("stored %d,%v after handling %v", off, ok, bodies)
	}
	_ = last
}

func TestPollErrorsBackOffAndStopAfterTenInARow(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	tr := transporttest.NewFaulty(log)
	var mu sync.Mutex
	polls := 0
	tr.FailPoll(func() error {
		mu.Lock()
		defer mu.Unlock()
		polls++
		return errors.New("not authorized to poll")
	})
	r := start(t, tr, runtime.ConsumerConfig{Agent: agent, Handler: handlerFunc(func(*runtime.Ctx) error { return nil })})
	err := r.wait(t)
	if err == nil || !strings.Contains(err.Error(), "10 times") {
		t.Fatalf("err = %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if polls != 10 {
		t.Fatalf("%d polls, want 10", polls)
	}
}

func TestPollErrorCounterResetsAfterASuccessfulPoll(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	tr := transporttest.NewFaulty(log)
	var mu sync.Mutex
	n := 0
	tr.FailPoll(func() error {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n%9 == 0 { // nine failures, then a success, again and again
			return nil
		}
		return errors.New("flaky")
	})
	got := make(chan struct{}, 1)
	start(t, tr, runtime.ConsumerConfig{Agent: agent, Handler: handlerFunc(func(*runtime.Ctx) error { got <- struct{}{}; return nil })})
	plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	recv(t, got, "message despite flaky polls")
}

func TestDisconnectStopsTheConsumerAtOnce(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	tr := transporttest.NewFaulty(log)
	r := start(t, tr, runtime.ConsumerConfig{Agent: agent, Handler: handlerFunc(func(*runtime.Ctx) error { return nil })})
	tr.Disconnect()
	if err := r.wait(t); !errors.Is(err, runtime.ErrDisconnected) {
		t.Fatalf("err = %v, want a disconnect", err)
	}
}

func TestFailedOffsetStoreLeavesTheMessageForRedelivery(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	tr := transporttest.NewFaulty(log)
	tr.FailCommit(func(uint32, uint64) error { return errors.New("offset store refused") })
	var mu sync.Mutex
	calls := 0
	called := make(chan struct{}, 2)
	cfg := runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(*runtime.Ctx) error {
			mu.Lock()
			calls++
			mu.Unlock()
			called <- struct{}{}
			return nil
		}),
	}
	r := start(t, tr, cfg)
	pos := plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	if err := r.wait(t); err == nil {
		t.Fatal("the consumer must stop when it cannot store an offset")
	}
	recv(t, called, "first delivery")
	tr.FailCommit(nil)
	r = start(t, tr, cfg)
	recv(t, called, "redelivery")
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if off, ok := stored(t, log, pos.Partition); !ok || off != pos.Offset {
		t.Fatal("not committed after restart")
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Fatalf("handler ran %d times, want 2 (at-least-once redelivery)", calls)
	}
}

// countingPolls counts the records its subscriptions returned.
type countingPolls struct {
	runtime.Transport
	mu sync.Mutex
	n  int
}

func (c *countingPolls) records() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *countingPolls) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	sub, err := c.Transport.Join(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	return &countingSub{Subscription: sub, c: c}, nil
}

type countingSub struct {
	runtime.Subscription
	c *countingPolls
}

func (s *countingSub) Poll(ctx context.Context, max int) ([]runtime.Incoming, error) {
	recs, err := s.Subscription.Poll(ctx, max)
	s.c.mu.Lock()
	s.c.n += len(recs)
	s.c.mu.Unlock()
	return recs, err
}

var _ = time.Second

func TestDeadLetterPublishErrorFromTheTransportStopsWithoutCommit(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	tr := transporttest.NewFaulty(log)
	tr.FailPublish(func(topic string) error {
		if topic == dlq {
			return errors.New("dlq unavailable")
		}
		return nil
	})
	sink, dls := deadLetters()
	r := start(t, tr, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(*runtime.Ctx) error { return runtime.Reject(fmt.Errorf("poison")) }),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv()}, "poison")
	dl := recv(t, dls, "failed dead letter")
	if dl.PublishErr == nil || !strings.Contains(dl.PublishErr.Error(), "dlq unavailable") {
		t.Fatalf("publish error %v", dl.PublishErr)
	}
	if err := r.wait(t); err == nil || !strings.Contains(err.Error(), "dead-letter publish failed") {
		t.Fatalf("err = %v", err)
	}
	if n := tr.CommitCount(); n != 0 {
		t.Fatalf("%d commits after a lost capsule", n)
	}
}

func TestTransientCommitFailuresAreRetried(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	tr := transporttest.NewFaulty(log)
	var mu sync.Mutex
	failures := 0
	tr.FailCommit(func(uint32, uint64) error {
		mu.Lock()
		defer mu.Unlock()
		if failures < 2 {
			failures++
			return &runtime.Error{Code: runtime.CodeTransport, Msg: "commit", Retryable: true, Err: errors.New("connection being rebuilt")}
		}
		return nil
	})
	handled := make(chan struct{}, 1)
	r := start(t, tr, runtime.ConsumerConfig{Agent: agent, Handler: handlerFunc(func(*runtime.Ctx) error { handled <- struct{}{}; return nil })})
	pos := plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	recv(t, handled, "handled")
	transporttest.Eventually(t, waitLimit, "offset committed", func() bool {
		off, ok := stored(t, log, pos.Partition)
		return ok && off == pos.Offset
	})
	if err := r.shutdown(t); err != nil {
		t.Fatalf("a transient commit failure must not stop the consumer: %v", err)
	}
}

func TestSerialCommitsWithinABatchOnceASecondHasPassed(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	c := conv()
	first := plain(t, log, wire.Provenance{Conversation: c}, "takes a second")
	plain(t, log, wire.Provenance{Conversation: c}, "blocks")
	release := make(chan struct{})
	blocking := make(chan struct{})
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			switch string(ctx.Message().Body()) {
			case "takes a second":
				clock.Advance(time.Second)
			case "blocks":
				close(blocking)
				<-release
			}
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Clock: clock}),
		Tuning: runtime.Tuning{
			PollBatch: 10,
		},
	})
	// The second record holds the batch; the first one's offset must not
	// wait for the batch to end, since a second passed while it ran.
	transporttest.Eventually(t, waitLimit, "the first record committed mid-batch", func() bool {
		off, ok := stored(t, log, first.Partition)
		return ok && off == first.Offset
	})
	// A graceful stop ends the batch before a record not yet picked up, so
	// the stop waits until the second record is being handled: the test is
	// about the commit of a batch that was handled to its end.
	recv(t, blocking, "the second record picked up")
	close(release)
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if off, _ := stored(t, log, first.Partition); off != first.Offset+1 {
		t.Fatalf("stored %d after the batch", off)
	}
}
