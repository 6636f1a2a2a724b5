package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// countedCommitLog records every commit its subscriptions make.
type countedCommitLog struct {
	*logstore.Log
	mu      sync.Mutex
	commits []uint64
}

func (l *countedCommitLog) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	s, err := l.Log.Join(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	return &countedCommitSub{Subscription: s, l: l}, nil
}

func (l *countedCommitLog) committed() []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]uint64(nil), l.commits...)
}

type countedCommitSub struct {
	runtime.Subscription
	l *countedCommitLog
}

func (s *countedCommitSub) Commit(ctx context.Context, partition uint32, offset uint64) error {
	s.l.mu.Lock()
	s.l.commits = append(s.l.commits, offset)
	s.l.mu.Unlock()
	return s.Subscription.Commit(ctx, partition, offset)
}

// TestCommitIntervalPacesCommitRounds handles one record, sees its commit
// round go at once, then handles 49 more one-record batches under a
// CommitInterval far longer than the test: their offsets wait and
// coalesce, and the graceful stop commits the last one. Two commits for
// 50 batches, and nothing handled is left uncommitted.
func TestCommitIntervalPacesCommitRounds(t *testing.T) {
	log := &countedCommitLog{Log: newLog(t, 1, clock.System{})}
	const n = 50
	handled := make(chan struct{}, n)
	r := start(t, log, runtime.ConsumerConfig{
		Handler: handlerFunc(func(*runtime.Ctx) error { handled <- struct{}{}; return nil }),
		Tuning:  runtime.Tuning{PollBatch: 1, CommitInterval: time.Hour},
	})
	plain(t, log, wire.Provenance{Conversation: wire.IDFromUint128(9, 0)}, "x")
	recv(t, handled, "the first record handled")
	eventually(t, "the first commit round", func() bool { return len(log.committed()) == 1 })
	for i := 1; i < n; i++ {
		plain(t, log, wire.Provenance{Conversation: wire.IDFromUint128(9, uint64(i))}, "x")
	}
	for i := 1; i < n; i++ {
		recv(t, handled, "a handled record")
	}
	if got := log.committed(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("commits %v before the stop, want only the first round's offset 0", got)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	got := log.committed()
	if len(got) != 2 || got[1] != n-1 {
		t.Fatalf("commits %v, want the first round and then offset %d at the stop", got, n-1)
	}
	if off, ok := stored(t, log, 0); !ok || off != n-1 {
		t.Fatalf("stored offset %d (%v), want %d", off, ok, n-1)
	}
}

// TestCommitIntervalNeverDropsACommit handles records while the consumer
// keeps running: a paced round still commits the last handled offset once
// the interval has passed, with no stop to flush it.
func TestCommitIntervalNeverDropsACommit(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	handled := make(chan struct{}, 4)
	start(t, log, runtime.ConsumerConfig{
		Handler: handlerFunc(func(*runtime.Ctx) error { handled <- struct{}{}; return nil }),
		Tuning:  runtime.Tuning{PollBatch: 1, CommitInterval: 20 * time.Millisecond},
	})
	for i := range 3 {
		plain(t, log, wire.Provenance{Conversation: wire.IDFromUint128(9, uint64(i))}, "x")
		recv(t, handled, "a handled record")
	}
	eventually(t, "the last handled offset committed", func() bool {
		off, ok := stored(t, log, 0)
		return ok && off == 2
	})
}
