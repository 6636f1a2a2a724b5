package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// pollCounter reports every non-empty Poll of the subscriptions it hands
// out, with the number of records it returned.
type pollCounter struct {
	runtime.Transport
	polled chan int
}

func (p *pollCounter) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	sub, err := p.Transport.Join(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	return &countedSub{Subscription: sub, polled: p.polled}, nil
}

type countedSub struct {
	runtime.Subscription
	polled chan int
}

func (s *countedSub) Poll(ctx context.Context, max int) ([]runtime.Incoming, error) {
	recs, err := s.Subscription.Poll(ctx, max)
	if len(recs) > 0 {
		s.polled <- len(recs)
	}
	return recs, err
}

// TestPollerReadsAtMostOneBatchAhead pins the bound of double-buffered
// polling: while a handler holds the first batch, the next batch is polled
// and waits, and nothing beyond it is read.
func TestPollerReadsAtMostOneBatchAhead(t *testing.T) {
	for _, conc := range []runtime.Concurrency{runtime.Serial, runtime.PerPartition(1)} {
		l := newLog(t, 1, clock.System{})
		ctx := context.Background()
		p := runtime.NewClient(l, runtime.ClientConfig{})
		for i := range 10 {
			prov := wire.Provenance{Conversation: wire.IDFromUint128(1, uint64(i))}
			if _, err := p.SendPlain(ctx, topic, prov, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		counter := &pollCounter{Transport: l, polled: make(chan int, 100)}
		release := make(chan struct{})
		handled := make(chan struct{}, 10)
		r := start(t, counter, runtime.ConsumerConfig{
			Group: "g",
			Handler: runtime.HandlerFunc(func(*runtime.Ctx) error {
				<-release
				handled <- struct{}{}
				return nil
			}),
			Tuning: runtime.Tuning{
				Concurrency:      conc,
				PollBatch:        2,
				MaxQueuedRecords: 1,
			},
		})
		// The batch being handled and the one read ahead, then polling
		// waits (with lanes, intake waits for the global bound too).
		for range 2 {
			if n := recv(t, counter.polled, "a poll"); n != 2 {
				t.Fatalf("polled %d records, want batches of 2", n)
			}
		}
		select {
		case <-counter.polled:
			t.Fatalf("%+v: polled a third batch while the first was still being handled", conc)
		case <-time.After(100 * time.Millisecond):
		}
		close(release)
		for range 10 {
			recv(t, handled, "a handled record")
		}
		if err := r.shutdown(t); err != nil {
			t.Fatal(err)
		}
	}
}
