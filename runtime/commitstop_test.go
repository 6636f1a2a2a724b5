package runtime_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// heldCommitLog holds its first commit until released, as a commit round
// trip still in flight when a hard stop arrives; a commit whose context was
// cancelled meanwhile fails, as a cut-off call does.
type heldCommitLog struct {
	*logstore.Log
	inFlight, release chan struct{}
	n                 atomic.Int32
}

func (l *heldCommitLog) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	s, err := l.Log.Join(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	return &heldCommitSub{Subscription: s, l: l}, nil
}

type heldCommitSub struct {
	runtime.Subscription
	l *heldCommitLog
}

func (s *heldCommitSub) Commit(ctx context.Context, partition uint32, offset uint64) error {
	if s.l.n.Add(1) == 1 {
		close(s.l.inFlight)
		<-s.l.release
		if err := ctx.Err(); err != nil {
			return &runtime.Error{Code: runtime.CodeTransport, Msg: "commit", Err: err}
		}
	}
	return s.Subscription.Commit(ctx, partition, offset)
}

// A commit in flight when a hard stop arrives is not cut off, and what was
// handled after it is still committed: the hard stop commits every record
// handled before it (within the final commit bound), whatever the commit
// goroutine was doing.
func TestACommitInFlightAtAHardStopStillStoresWhatWasHandled(t *testing.T) {
	for _, conc := range []runtime.Concurrency{runtime.Serial, runtime.PerPartition(2), runtime.PerConversation(2)} {
		t.Run(conc.String(), func(t *testing.T) {
			log := &heldCommitLog{Log: newLog(t, 1, clock.System{}), inFlight: make(chan struct{}), release: make(chan struct{})}
			c := conv()
			plain(t, log, wire.Provenance{Conversation: c}, "m0")
			started, cutOff := make(chan struct{}), make(chan struct{})
			consumer, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
				Topic: topic,
				Group: agent,
				Handler: handlerFunc(func(ctx *runtime.Ctx) error {
					if string(ctx.Message().Body()) == "cut off" {
						close(started)
						<-ctx.Done()
						close(cutOff)
						return ctx.Err()
					}
					return nil
				}),
				Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
				Tuning: runtime.Tuning{
					Concurrency: conc,
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- consumer.Run(ctx, nil, nil) }()
			recv(t, log.inFlight, "m0's commit in flight")
			m1 := plain(t, log, wire.Provenance{Conversation: c}, "m1")
			plain(t, log, wire.Provenance{Conversation: c}, "cut off")
			recv(t, started, "the handler the stop cuts off")
			cancel()
			recv(t, cutOff, "the hard stop reaching the handler")
			close(log.release)
			if err := recv(t, done, "Run after the hard stop"); !errors.Is(err, context.Canceled) {
				t.Fatalf("Run = %v, want context.Canceled", err)
			}
			if off, ok := stored(t, log, m1.Partition); !ok || off != m1.Offset {
				t.Fatalf("stored offset %d (%v), want m1's %d: a record handled before the stop was not committed", off, ok, m1.Offset)
			}
		})
	}
}
