package logstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/internal/xxh32"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newLog(t *testing.T, partitions uint32, topics ...string) *logstore.Log {
	t.Helper()
	l := logstore.New("laser")
	if err := l.EnsureTopics(context.Background(), partitions, topics...); err != nil {
		t.Fatal(err)
	}
	return l
}

func join(t *testing.T, l *logstore.Log, topic, group string) *logstore.Subscription {
	t.Helper()
	s, err := l.Join(context.Background(), topic, group)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*logstore.Subscription)
}

func pub(t *testing.T, l *logstore.Log, topic string, recs ...runtime.Outgoing) []runtime.Position {
	t.Helper()
	pos, err := l.Publish(context.Background(), topic, recs...)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

func keyed(key string, n int) []runtime.Outgoing {
	out := make([]runtime.Outgoing, n)
	for i := range out {
		out[i] = runtime.Outgoing{Key: key, Payload: fmt.Appendf(nil, "%s-%d", key, i)}
	}
	return out
}

// keyFor returns a key that lands on partition p of n.
func keyFor(p, n uint32) string {
	for i := 0; ; i++ {
		k := fmt.Sprintf("k%d", i)
		if xxh32.Sum32([]byte(k), 0)%n == p {
			return k
		}
	}
}

func poll(t *testing.T, s runtime.Subscription, max int) []runtime.Incoming {
	t.Helper()
	recs, err := s.Poll(context.Background(), max)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func positions(recs []runtime.Incoming) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Position.String()
	}
	return out
}

func TestPublishToMissingTopicFails(t *testing.T) {
	l := logstore.New("laser")
	_, err := l.Publish(context.Background(), "x", runtime.Outgoing{Payload: []byte("a")})
	if err == nil || err.Error() != `embedlog: topic "x" does not exist` {
		t.Fatalf("error %v, want embedlog: topic \"x\" does not exist", err)
	}
	if !errors.Is(err, logstore.ErrNoTopic) || errors.Is(err, runtime.ErrTransient) {
		t.Errorf("error %v: ErrNoTopic=%v transient=%v, want a permanent ErrNoTopic", err, errors.Is(err, logstore.ErrNoTopic), errors.Is(err, runtime.ErrTransient))
	}
}

func TestPublishIsOneBatch(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	l := logstore.New("laser", logstore.WithClock(clock))
	if err := l.EnsureTopics(context.Background(), 4, "t"); err != nil {
		t.Fatal(err)
	}
	k0, k1 := keyFor(0, 4), keyFor(1, 4)
	pos := pub(t, l, "t",
		runtime.Outgoing{Key: k0, Payload: []byte("a")},
		runtime.Outgoing{Key: k1, Payload: []byte("b")},
		runtime.Outgoing{Key: k0, Payload: []byte("c")},
		runtime.Outgoing{Key: k0, Payload: []byte("d")},
	)
	if got := fmt.Sprint(pos); got != "[0:0 1:0 0:1 0:2]" {
		t.Errorf("positions %s, want [0:0 1:0 0:1 0:2]", got)
	}
	clock.Advance(time.Millisecond)
	pub(t, l, "t", runtime.Outgoing{Key: k0, Payload: []byte("e")})
	recs, err := l.ReadRange(context.Background(), "t", 0, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	t0 := uint64(epoch.UnixMicro())
	for i, ts := range []uint64{t0, t0, t0, t0 + 1000} {
		if recs[i].Timestamp != ts {
			t.Errorf("record %d timestamp %d, want %d", i, recs[i].Timestamp, ts)
		}
	}
}

func TestPublishUnkeyedIsBalanced(t *testing.T) {
	l := newLog(t, 3, "t")
	pos := pub(t, l, "t", keyed("", 4)...)
	pos = append(pos, pub(t, l, "t", keyed("", 2)...)...)
	for i, p := range pos {
		if p.Partition != uint32(i%3) {
			t.Errorf("unkeyed record %d on partition %d, want %d", i, p.Partition, i%3)
		}
	}
}

func TestPublishKeyedFollowsPartitionForKey(t *testing.T) {
	l := newLog(t, 7, "t")
	tp, _ := l.Topic("t")
	for i := range 20 {
		key := fmt.Sprintf("conversation-%d", i)
		pos := pub(t, l, "t", runtime.Outgoing{Key: key, Payload: []byte("x")})
		if want := tp.PartitionForKey([]byte(key)); pos[0].Partition != want {
			t.Errorf("key %q on %d, want %d", key, pos[0].Partition, want)
		}
	}
}

func TestEnsureTopicsUsesDefaultPartitions(t *testing.T) {
	l := logstore.New("laser", logstore.WithDefaultPartitions(4))
	ctx := context.Background()
	if err := l.EnsureTopics(ctx, 0, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if err := l.EnsureTopics(ctx, 2, "a", "c"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint32{"a": 4, "b": 4, "c": 2} {
		if n, err := l.Partitions(ctx, name); err != nil || n != want {
			t.Errorf("Partitions(%q) = %d, %v; want %d", name, n, err, want)
		}
	}
	if err := l.EnsureTopics(ctx, logstore.MaxPartitions+1, "d"); !errors.Is(err, logstore.ErrBadPartitions) {
		t.Errorf("EnsureTopics with too many partitions: %v, want ErrBadPartitions", err)
	}
}

func TestJoinMissingTopicFails(t *testing.T) {
	l := logstore.New("laser")
	if _, err := l.Join(context.Background(), "nope", "g"); !errors.Is(err, logstore.ErrNoTopic) {
		t.Fatalf("Join on a missing topic: %v, want ErrNoTopic", err)
	}
}

func TestJoinCreatesGroupAndDistinctMembers(t *testing.T) {
	l := newLog(t, 2, "t")
	a, b := join(t, l, "t", "g"), join(t, l, "t", "g")
	if a.Member() == b.Member() {
		t.Fatalf("two joins share member id %d", a.Member())
	}
	if a.Member()&(1<<63) == 0 {
		t.Errorf("transport member id %d lacks the top bit that keeps it apart from server client ids", a.Member())
	}
	tp, _ := l.Topic("t")
	g, ok := tp.Group("g")
	if !ok || len(g.Members()) != 2 {
		t.Fatalf("group after two joins: %v, %v", ok, g)
	}
}

func TestSubscriptionResumesFromStoredOffsetAfterRebalance(t *testing.T) {
	l := newLog(t, 2, "t")
	ctx := context.Background()
	k0, k1 := keyFor(0, 2), keyFor(1, 2)
	pub(t, l, "t", append(keyed(k0, 2), keyed(k1, 2)...)...)
	a := join(t, l, "t", "g")
	if got := positions(poll(t, a, 10)); len(got) != 4 {
		t.Fatalf("sole member polled %v, want all 4 records", got)
	}
	if err := a.Commit(ctx, 0, 0); err != nil {
		t.Fatal(err)
	}

	b := join(t, l, "t", "g") // takes partition 1, where nothing is committed
	if got := positions(poll(t, b, 10)); fmt.Sprint(got) != "[1:0 1:1]" {
		t.Fatalf("new member polled %v, want [1:0 1:1]", got)
	}
	if got := poll(t, a, 10); len(got) != 0 {
		t.Fatalf("old member re-polled %v from a partition it kept", positions(got))
	}
	if err := b.Commit(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	// Partition 1 returns to a: it resumes after b's commit. Partition 0 was
	// never handed away, so a's cursor there stays put.
	if got := positions(poll(t, a, 10)); fmt.Sprint(got) != "[1:1]" {
		t.Fatalf("after rebalance the member polled %v, want [1:1]", got)
	}
}

func TestPollDoesNotCommit(t *testing.T) {
	l := newLog(t, 1, "t")
	pub(t, l, "t", keyed("k", 3)...)
	s := join(t, l, "t", "g")
	if got := poll(t, s, 10); len(got) != 3 {
		t.Fatalf("polled %d records", len(got))
	}
	if _, ok, err := l.StoredOffset(context.Background(), "t", "g", 0); ok || err != nil {
		t.Fatalf("StoredOffset after poll: ok=%v err=%v, want nothing stored", ok, err)
	}
}

func TestCommitErrors(t *testing.T) {
	l := newLog(t, 2, "t")
	ctx := context.Background()
	pub(t, l, "t", append(keyed(keyFor(0, 2), 2), keyed(keyFor(1, 2), 2)...)...)
	a, b := join(t, l, "t", "g"), join(t, l, "t", "g") // a owns 0, b owns 1
	cases := []struct {
		name      string
		partition uint32
		offset    uint64
		want      error
	}{
		{"past the end", 0, 2, logstore.ErrInvalidOffset},
		{"not owned", 1, 0, logstore.ErrNotOwner},
		{"no such partition", 5, 0, logstore.ErrNoPartition},
	}
	for _, c := range cases {
		err := a.Commit(ctx, c.partition, c.offset)
		if !errors.Is(err, c.want) || errors.Is(err, runtime.ErrTransient) {
			t.Errorf("%s: Commit(%d, %d) = %v, want permanent %v", c.name, c.partition, c.offset, err, c.want)
		}
	}
	if err := b.Commit(ctx, 1, 1); err != nil {
		t.Errorf("owner commit: %v", err)
	}
}

func TestClosedSubscriptionIsDisconnected(t *testing.T) {
	l := newLog(t, 2, "t")
	ctx := context.Background()
	s := join(t, l, "t", "g")
	other := join(t, l, "t", "g")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, pollErr := s.Poll(ctx, 1)
	for name, err := range map[string]error{"poll": pollErr, "commit": s.Commit(ctx, 0, 0), "leave": s.Leave(ctx), "wait": s.Wait(ctx)} {
		if !errors.Is(err, runtime.ErrDisconnected) {
			t.Errorf("%s after Close: %v, want ErrDisconnected", name, err)
		}
	}
	tp, _ := l.Topic("t")
	g, _ := tp.Group("g")
	if len(g.Members()) != 1 {
		t.Errorf("closed member still in the group: %v", g.Members())
	}
	if owned, _ := g.Assigned(other.Member()); len(owned) != 2 {
		t.Errorf("remaining member owns %v, want both partitions", owned)
	}
}

func TestLeftSubscriptionFails(t *testing.T) {
	l := newLog(t, 1, "t")
	ctx := context.Background()
	s := join(t, l, "t", "g")
	if err := s.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := s.Poll(ctx, 1)
	if !errors.Is(err, logstore.ErrNotMember) || errors.Is(err, runtime.ErrTransient) {
		t.Errorf("Poll after Leave: %v, want permanent ErrNotMember", err)
	}
	if err := s.Leave(ctx); !errors.Is(err, logstore.ErrNotMember) {
		t.Errorf("second Leave: %v, want ErrNotMember", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after Leave: %v", err)
	}
}

func TestSubscriptionFailsAfterTopicDeleted(t *testing.T) {
	l := newLog(t, 1, "t")
	s := join(t, l, "t", "g")
	if err := l.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Poll(context.Background(), 1); !errors.Is(err, logstore.ErrNoTopic) {
		t.Fatalf("Poll after DeleteTopic: %v, want ErrNoTopic", err)
	}
	if _, err := l.Publish(context.Background(), "t", keyed("k", 1)...); !errors.Is(err, logstore.ErrNoTopic) {
		t.Fatalf("Publish after DeleteTopic: %v, want ErrNoTopic", err)
	}
}

func TestPollRotatesOverPartitions(t *testing.T) {
	l := newLog(t, 3, "t")
	for p := range uint32(3) {
		pub(t, l, "t", keyed(keyFor(p, 3), 4)...)
	}
	s := join(t, l, "t", "g")
	var got []string
	for range 3 {
		got = append(got, positions(poll(t, s, 2))...)
	}
	if want := "[0:0 0:1 1:0 1:1 2:0 2:1]"; fmt.Sprint(got) != want {
		t.Fatalf("polls of 2 visited %v, want %s", got, want)
	}
	// A large poll drains every partition, starting where rotation stands.
	if got := positions(poll(t, s, 100)); fmt.Sprint(got) != "[0:2 0:3 1:2 1:3 2:2 2:3]" {
		t.Fatalf("draining poll %v", got)
	}
	if got := poll(t, s, 100); got != nil {
		t.Fatalf("poll of a drained subscription returned %v", positions(got))
	}
}

func TestPollValidatesMax(t *testing.T) {
	l := newLog(t, 1, "t")
	pub(t, l, "t", keyed("k", 1)...)
	s := join(t, l, "t", "g")
	if got := poll(t, s, 0); got != nil {
		t.Errorf("Poll(0) returned %v", got)
	}
	if _, err := s.Poll(context.Background(), -1); !errors.Is(err, logstore.ErrBadCount) {
		t.Errorf("Poll(-1): %v, want ErrBadCount", err)
	}
}

func TestCanceledContextFails(t *testing.T) {
	l := newLog(t, 1, "t")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Publish(ctx, "t", keyed("k", 1)...); !errors.Is(err, context.Canceled) {
		t.Errorf("Publish with a canceled context: %v", err)
	}
	if _, err := l.Join(ctx, "t", "g"); !errors.Is(err, context.Canceled) {
		t.Errorf("Join with a canceled context: %v", err)
	}
}

func TestWaitReturnsWhenRecordsArrive(t *testing.T) {
	l := newLog(t, 2, "t")
	s := join(t, l, "t", "g")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Wait(ctx) }()
	pub(t, l, "t", keyed("k", 1)...)
	if err := <-done; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if got := poll(t, s, 10); len(got) != 1 {
		t.Fatalf("after Wait, Poll returned %d records", len(got))
	}
}

func TestWaitEndsOnCloseAndCancel(t *testing.T) {
	l := newLog(t, 1, "t")
	s := join(t, l, "t", "g")
	done := make(chan error, 1)
	go func() { done <- s.Wait(context.Background()) }()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, runtime.ErrDisconnected) {
		t.Errorf("Wait after Close: %v, want ErrDisconnected", err)
	}

	s2 := join(t, l, "t", "g")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- s2.Wait(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Wait after cancel: %v, want context.Canceled", err)
	}
}

func TestStoredOffsetChecksPartition(t *testing.T) {
	l := newLog(t, 1, "t")
	if _, _, err := l.StoredOffset(context.Background(), "t", "g", 3); !errors.Is(err, logstore.ErrNoPartition) {
		t.Errorf("StoredOffset of partition 3: %v, want ErrNoPartition", err)
	}
	if _, _, err := l.StoredOffset(context.Background(), "nope", "g", 0); !errors.Is(err, logstore.ErrNoTopic) {
		t.Errorf("StoredOffset of a missing topic: %v, want ErrNoTopic", err)
	}
}

func TestTopicIDsReportStreamAndTopic(t *testing.T) {
	l := logstore.New("laser", logstore.WithStreamID(7))
	if err := l.EnsureTopics(context.Background(), 1, "a", "b"); err != nil {
		t.Fatal(err)
	}
	s, id, err := l.TopicIDs(context.Background(), "b")
	if err != nil || s != 7 || id != 1 {
		t.Fatalf("TopicIDs(b) = %d, %d, %v; want 7, 1", s, id, err)
	}
}

// TestConcurrentPublishersAndConsumersLoseNothing runs publishers and a
// stable group side by side and counts every record exactly once.
func TestConcurrentPublishersAndConsumersLoseNothing(t *testing.T) {
	const (
		parts      = 4
		publishers = 4
		perPub     = 250
		consumers  = 3
		total      = publishers * perPub
	)
	l := newLog(t, parts, "t")
	subs := make([]*logstore.Subscription, consumers)
	for i := range subs {
		subs[i] = join(t, l, "t", "g")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	seen := make(map[string]int)
	allSeen := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, publishers+consumers)
	for p := range publishers {
		wg.Go(func() {
			for i := range perPub {
				rec := runtime.Outgoing{Key: fmt.Sprintf("conv-%d", i%7), Payload: fmt.Appendf(nil, "p%d-%d", p, i)}
				if i%5 == 0 {
					rec.Key = "" // balanced
				}
				if _, err := l.Publish(ctx, "t", rec); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	stop, stopAll := context.WithCancel(ctx)
	for _, s := range subs {
		wg.Go(func() {
			for {
				recs, err := s.Poll(stop, 16)
				if err != nil {
					if stop.Err() == nil {
						errs <- err
					}
					return
				}
				if len(recs) == 0 {
					if err := s.Wait(stop); err != nil {
						return
					}
					continue
				}
				for _, r := range recs {
					if err := s.Commit(stop, r.Partition, r.Offset); err != nil {
						if stop.Err() == nil {
							errs <- err
						}
						return
					}
					mu.Lock()
					seen[string(r.Payload)]++
					if len(seen) == total {
						close(allSeen)
					}
					mu.Unlock()
				}
			}
		})
	}
	select {
	case <-allSeen:
	case err := <-errs:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("not every record was consumed in time")
	}
	stopAll()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("record %s delivered %d times", k, n)
		}
	}
	for p := range uint32(parts) {
		next, _ := l.NextOffset(context.Background(), "t", p)
		off, ok, _ := l.StoredOffset(context.Background(), "t", "g", p)
		if next > 0 && (!ok || off != next-1) {
			t.Errorf("partition %d: stored %d (%v), want the last offset %d", p, off, ok, next-1)
		}
	}
}

// TestConcurrentChurnDeliversAtLeastOnce has members join and leave while
// records flow; every record is handled at least once because each member
// commits only what it handled and leaves only after committing.
func TestConcurrentChurnDeliversAtLeastOnce(t *testing.T) {
	const (
		parts = 3
		total = 600
	)
	l := newLog(t, parts, "t")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	seen := make(map[string]int)
	allSeen := make(chan struct{})
	record := func(r runtime.Incoming) {
		mu.Lock()
		defer mu.Unlock()
		seen[string(r.Payload)]++
		if seen[string(r.Payload)] == 1 && len(seen) == total {
			close(allSeen)
		}
	}
	// consume handles up to rounds non-empty polls then leaves; rounds < 0
	// means until stop ends.
	consume := func(stop context.Context, s *logstore.Subscription, rounds int) error {
		for rounds != 0 {
			recs, err := s.Poll(stop, 8)
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				if err := s.Wait(stop); err != nil {
					return err
				}
				continue
			}
			rounds--
			for _, r := range recs {
				record(r)
				if err := s.Commit(stop, r.Partition, r.Offset); err != nil && !errors.Is(err, logstore.ErrNotOwner) {
					return err
				}
			}
		}
		return s.Leave(stop)
	}

	stop, stopAll := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	report := func(err error) {
		if err != nil && stop.Err() == nil {
			errs <- err
		}
	}
	steady := join(t, l, "t", "g")
	wg.Go(func() { report(consume(stop, steady, -1)) })
	wg.Go(func() {
		for i := range total {
			if _, err := l.Publish(ctx, "t", runtime.Outgoing{Key: fmt.Sprintf("c%d", i%11), Payload: fmt.Appendf(nil, "r%d", i)}); err != nil {
				report(err)
				return
			}
		}
	})
	wg.Go(func() {
		for stop.Err() == nil {
			s, err := l.Join(stop, "t", "g")
			if err != nil {
				report(err)
				return
			}
			report(consume(stop, s.(*logstore.Subscription), 3))
		}
	})
	select {
	case <-allSeen:
	case err := <-errs:
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("not every record was consumed in time")
	}
	stopAll()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestReadRecordsDoNotAliasTheLog(t *testing.T) {
	l := logstore.New("laser")
	ctx := context.Background()
	if err := l.EnsureTopics(ctx, 1, "t"); err != nil {
		t.Fatal(err)
	}
	h := wire.Headers{{Key: "k", Value: wire.StringValue("abc")}}
	if _, err := l.Publish(ctx, "t", runtime.Outgoing{Headers: h, Payload: []byte("hello")}); err != nil {
		t.Fatal(err)
	}
	sub, err := l.Join(ctx, "t", "g")
	if err != nil {
		t.Fatal(err)
	}
	polled, err := sub.Poll(ctx, 1)
	if err != nil || len(polled) != 1 {
		t.Fatalf("poll %v %v", polled, err)
	}
	polled[0].Payload[0] = 'J'
	if v, ok := polled[0].Headers.Get("k"); ok {
		v.Data[0] = 'X'
	}
	read, err := l.ReadRange(ctx, "t", 0, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	read[0].Payload[1] = 'E'
	again, err := l.ReadRange(ctx, "t", 0, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := again[0].Headers.Get("k"); string(again[0].Payload) != "hello" || string(v.Data) != "abc" {
		t.Fatalf("the log changed under its readers: %q %q", again[0].Payload, v.Data)
	}
}

// TestPublishRefusesHeadersIggyRefuses pins that the embedded log refuses
// a header Iggy would refuse, and that nothing of the batch lands.
func TestPublishRefusesHeadersIggyRefuses(t *testing.T) {
	l := logstore.New("laser")
	ctx := t.Context()
	if err := l.EnsureTopics(ctx, 1, "t"); err != nil {
		t.Fatal(err)
	}
	good := runtime.Outgoing{Headers: wire.Headers{{Key: "k", Value: wire.StringValue("v")}}, Payload: []byte("ok")}
	bad := runtime.Outgoing{Headers: wire.Headers{{Key: "k", Value: wire.HeaderValue{Kind: wire.HeaderKindString}}}, Payload: []byte("empty value")}
	if _, err := l.Publish(ctx, "t", good, bad); !errors.Is(err, wire.ErrBadHeader) {
		t.Fatalf("publish of an empty header value: %v, want ErrBadHeader", err)
	}
	if next, err := l.NextOffset(ctx, "t", 0); err != nil || next != 0 {
		t.Fatalf("after a refused batch the partition's next offset is %d (%v), want 0", next, err)
	}
}
