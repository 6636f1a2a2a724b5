package redisdedup_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/internal/xxh32"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
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
// made itself: the consumer (Serial, or the lane that asked) takes them as
// its own and handles the records at once, instead of waiting out their
// lease (an hour here) as if another replica held them.
func TestARetriedClaimBatchWhoseAnswerWasLostHandlesAtOnce(t *testing.T) {
	for _, mode := range modes[:2] { // PerConversation claims key by key
		t.Run(mode.name, func(t *testing.T) {
			rdb, log := setup(t)
			d := &lostReply{Deduplicator: redisdedup.New(rdb, "billing", redisdedup.Config{Lease: time.Hour})}
			send(t, log, wire.IDFromUint128(31, 1), "order-1", "first")
			send(t, log, wire.IDFromUint128(31, 1), "order-2", "second")
			handled := make(chan string, 4)
			stop := consumerWith(t, log, d, handled, mode.c)
			if got := drain(t, handled, 2); got[0] != "first" || got[1] != "second" {
				t.Fatalf("handled %q, want first and second", got)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			if d.calls.Load() < 2 {
				t.Fatalf("ClaimBatch called %d times, want the lost answer asked again", d.calls.Load())
			}
			remembered(t, rdb, d.Key(dedup.Key("shop", "order-1")))
			remembered(t, rdb, d.Key(dedup.Key("shop", "order-2")))
		})
	}
}

// lostEveryOther is the Redis deduplicator losing the answer of every other
// ClaimBatch that succeeded.
type lostEveryOther struct {
	*redisdedup.Deduplicator
	calls atomic.Int32
}

func (l *lostEveryOther) ClaimBatch(ctx context.Context, keys []string, states []dedup.KeyState) error {
	err := l.Deduplicator.ClaimBatch(ctx, keys, states)
	if l.calls.Add(1)%2 == 1 && err == nil {
		return &redisdedup.Error{Op: "claim", Transient: true, Err: context.DeadlineExceeded}
	}
	return err
}

// Lanes take a claim whose answer was lost as their own only when no other
// lane has the key in its batch: the same command on four partitions at
// once, every other answer lost, is handled once.
func TestLanesTakeALostClaimAsTheirOwnOnlyWhenNoOtherLaneHasTheKey(t *testing.T) {
	rdb := client(t, redistest.Start(t).Addr())
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(t.Context(), 4, topic, runtime.TopicDLQ); err != nil {
		t.Fatal(err)
	}
	partitions := map[uint32]bool{}
	for i := range 16 {
		conv := wire.IDFromUint128(32, uint64(i))
		partitions[xxh32.Sum32([]byte(wire.PartitionKey(conv)), 0)%4] = true
		send(t, log, conv, "order-1", "order-1")
		send(t, log, conv, fmt.Sprintf("own-%d", i), "own")
	}
	if len(partitions) < 2 {
		t.Fatalf("the commands landed on %d partition; the test needs several", len(partitions))
	}
	d := &lostEveryOther{Deduplicator: redisdedup.New(rdb, "billing", redisdedup.Config{Lease: 300 * time.Millisecond})}
	handled := make(chan string, 64)
	stop := consumerWith(t, log, d, handled, runtime.PerPartition(4))
	counts := map[string]int{}
	for _, body := range drain(t, handled, 17) {
		counts[body]++
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for len(handled) > 0 {
		counts[<-handled]++
	}
	if counts["order-1"] != 1 || counts["own"] != 16 {
		t.Fatalf("handled %v; want order-1 once and each own command once", counts)
	}
}
