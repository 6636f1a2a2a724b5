package redisdedup_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/wire"
)

// lostReply is the Redis deduplicator whose first ClaimBatch reaches Redis
// (the claims are made) but whose answer is lost: it fails transiently, as
// a read timeout after the server ran the pipeline does.
type lostReply struct {
	*redisdedup.Deduplicator
	calls atomic.Int32
}

func (l *lostReply) ClaimBatch(ctx context.Context, keys []string, states []dedup.KeyState) error {
	err := l.Deduplicator.ClaimBatch(ctx, keys, states)
	if l.calls.Add(1) == 1 && err == nil {
		return &redisdedup.Error{Op: "claim", Transient: true, Err: context.DeadlineExceeded}
	}
	return err
}

// A ClaimBatch asked again after its answer was lost finds the claims it
// made itself: the Serial consumer takes them as its own and handles the
// records at once, instead of waiting out their lease (an hour here) as if
// another replica held them.
func TestARetriedClaimBatchWhoseAnswerWasLostHandlesAtOnce(t *testing.T) {
	rdb, log := setup(t)
	d := &lostReply{Deduplicator: redisdedup.New(rdb, "billing", redisdedup.Config{Lease: time.Hour})}
	send(t, log, wire.IDFromUint128(31, 1), "order-1", "first")
	handled := make(chan string, 4)
	stop := consumer(t, log, d, handled)
	if got := next(t, handled); got != "first" {
		t.Fatalf("handled %q, want first", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if d.calls.Load() < 2 {
		t.Fatalf("ClaimBatch called %d times, want the lost answer asked again", d.calls.Load())
	}
	remembered(t, rdb, d.Key(dedup.Key("shop", "order-1")))
}
