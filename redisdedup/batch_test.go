package redisdedup_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// modes are the schedulers every consumer test of the batch path runs.
var modes = []struct {
	name string
	c    runtime.Concurrency
}{{"serial", runtime.Serial}, {"lanes", runtime.PerPartition(4)}, {"perconversation", runtime.PerConversation(8)}}

// countingDedup is the Redis deduplicator counting its calls by kind.
type countingDedup struct {
	*redisdedup.Deduplicator
	observes, claims, claimedKeys atomic.Int32
}

func (c *countingDedup) Observe(ctx context.Context, key string) (bool, error) {
	c.observes.Add(1)
	return c.Deduplicator.Observe(ctx, key)
}

func (c *countingDedup) ClaimBatch(ctx context.Context, keys []string, states []dedup.KeyState) error {
	c.claims.Add(1)
	c.claimedKeys.Add(int32(len(keys)))
	return c.Deduplicator.ClaimBatch(ctx, keys, states)
}

// drain returns the next n bodies handled.
func drain(t *testing.T, ch <-chan string, n int) []string {
	t.Helper()
	var got []string
	for range n {
		got = append(got, next(t, ch))
	}
	return got
}

func TestConsumerClaimsTheKeysOfAPolledBatchInOneRoundTrip(t *testing.T) {
	for _, mode := range modes[:2] { // PerConversation claims key by key
		t.Run(mode.name, func(t *testing.T) {
			rdb, log := setup(t)
			const n = 50
			for i := range n {
				send(t, log, wire.IDFromUint128(7, uint64(i)), fmt.Sprintf("order-%d", i), fmt.Sprint(i))
			}
			d := &countingDedup{Deduplicator: redisdedup.New(rdb, "billing")}
			counter := &commandCounter{}
			rdb.AddHook(counter)
			handled := make(chan string, n)
			stop := consumerWith(t, log, d, handled, mode.c)
			drain(t, handled, n)
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			// All 50 records come in one poll (PollBatch 100, one partition).
			if c, k, o := d.claims.Load(), d.claimedKeys.Load(), d.observes.Load(); c != 1 || k != n || o != 0 {
				t.Fatalf("%d batch claims of %d keys and %d single observes; want one claim of all %d keys", c, k, o, n)
			}
			// The claim, and the completions batched behind the handlers:
			// far fewer than the two commands a message of before.
			// 5 on an idle machine; a loaded one splits the completions more.
			if cmds := counter.n.Load(); cmds > n/2 {
				t.Fatalf("%d Redis round trips for %d messages; want at most one per two messages", cmds, n)
			}
			for i := range n {
				remembered(t, rdb, d.Key(dedup.Key("shop", fmt.Sprintf("order-%d", i))))
			}
		})
	}
}

func TestConsumerDropsADuplicateWithinOneBatch(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rdb, log := setup(t)
			conv := wire.IDFromUint128(8, 1)
			// Published before the consumer starts: one poll holds all three.
			send(t, log, conv, "order-1", "first")
			send(t, log, conv, "order-1", "duplicate of first")
			send(t, log, conv, "order-2", "second")
			handled := make(chan string, 4)
			d := redisdedup.New(rdb, "billing")
			stop := consumerWith(t, log, d, handled, mode.c)
			if got := drain(t, handled, 2); got[0] != "first" || got[1] != "second" {
				t.Fatalf("handled %q; want first and second, the duplicate dropped", got)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-handled:
				t.Fatalf("handled %q as well", got)
			default:
			}
			remembered(t, rdb, d.Key(dedup.Key("shop", "order-1")))
		})
	}
}

func TestConsumerDropsADuplicateAcrossReplicas(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rdb, logA := setup(t)
			logB := embedlog.New("laser", embedlog.Config{})
			if err := logB.EnsureTopics(t.Context(), 1, topic, runtime.TopicDLQ); err != nil {
				t.Fatal(err)
			}
			// The same command reaches two replicas at once (two logs stand
			// for two partitions the replicas own), beside one of their own.
			conv := wire.IDFromUint128(9, 1)
			send(t, logA, conv, "order-1", "order-1")
			send(t, logB, conv, "order-1", "order-1")
			send(t, logA, conv, "order-a", "order-a")
			send(t, logB, conv, "order-b", "order-b")
			handled := make(chan string, 8)
			stopA := consumerWith(t, logA, redisdedup.New(rdb, "billing"), handled, mode.c)
			stopB := consumerWith(t, logB, redisdedup.New(rdb, "billing"), handled, mode.c)
			counts := map[string]int{}
			for _, body := range drain(t, handled, 3) {
				counts[body]++
			}
			if err := stopA(); err != nil {
				t.Fatal(err)
			}
			if err := stopB(); err != nil {
				t.Fatal(err)
			}
			for len(handled) > 0 {
				counts[<-handled]++
			}
			if counts["order-1"] != 1 || counts["order-a"] != 1 || counts["order-b"] != 1 {
				t.Fatalf("handled %v; want each command once, order-1 by one replica only", counts)
			}
		})
	}
}

func TestConsumerTakesADeadReplicasClaimOnlyAfterItsLease(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rdb, log := setup(t)
			lease := 400 * time.Millisecond
			// replica-1 claimed the key and was killed before handling it.
			dead := redisdedup.New(rdb, "billing", redisdedup.Config{Owner: "replica-1", Lease: lease})
			key := dedup.Key("shop", "order-1")
			states := make([]dedup.KeyState, 1)
			if err := dead.ClaimBatch(t.Context(), []string{key}, states); err != nil || states[0] != dedup.KeyClaimed {
				t.Fatalf("claim = %v, %v", states[0], err)
			}
			claimedAt := time.Now()
			send(t, log, wire.IDFromUint128(10, 1), "order-1", "first")
			handled := make(chan string, 2)
			stop := consumerWith(t, log, redisdedup.New(rdb, "billing", redisdedup.Config{Owner: "replica-2"}), handled, mode.c)
			if got := next(t, handled); got != "first" {
				t.Fatalf("handled %q", got)
			}
			if took := time.Since(claimedAt); took < lease {
				t.Fatalf("replica-2 handled the record %v after replica-1 claimed it, within its lease of %v", took, lease)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			remembered(t, rdb, billing(rdb).Key(key))
		})
	}
}

// billing returns a deduplicator of the tests' scope, for its Key.
func billing(rdb *redis.Client) *redisdedup.Deduplicator { return redisdedup.New(rdb, "billing") }

func TestConsumerWhoseKeysCannotBeCompletedCommitsNoOffset(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			rdb, log := setup(t)
			ctx := t.Context()
			fd := &flakyComplete{Deduplicator: redisdedup.New(rdb, "billing")}
			fd.fails.Store(1 << 30)
			var handled atomic.Int32
			c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
				Topic: topic, Group: "billing",
				Client:  runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
				Handler: runtime.HandlerFunc(func(*runtime.Ctx) error { handled.Add(1); return nil }),
				Tuning:  runtime.Tuning{Deduplicator: fd, Concurrency: mode.c},
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 5 {
				send(t, log, wire.IDFromUint128(11, uint64(i)), fmt.Sprintf("order-%d", i), "body")
			}
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx, nil, make(chan struct{})) }()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the consumer kept going although no key could be completed")
			}
			if !errors.Is(err, runtime.ErrTransient) {
				t.Fatalf("Run returned %v; want a transient error", err)
			}
			if handled.Load() == 0 {
				t.Fatal("nothing was handled; the test proves nothing")
			}
			if off, ok, _ := log.StoredOffset(ctx, topic, "billing", 0); ok {
				t.Fatalf("offset %d committed although the keys below it are claims", off)
			}
		})
	}
}

func TestConsumerClaimsAStaleBatchClaimAgainBeforeItsRecordStarts(t *testing.T) {
	for _, mode := range modes[:2] { // PerConversation claims key by key
		t.Run(mode.name, func(t *testing.T) {
			rdb, log := setup(t)
			conv := wire.IDFromUint128(12, 1)
			send(t, log, conv, "order-1", "slow")
			send(t, log, conv, "order-2", "second")
			started, release := make(chan struct{}), make(chan struct{})
			handled := make(chan string, 4)
			// A lease of 1 ms: the batch's claims lapse while "slow" runs.
			d := redisdedup.New(rdb, "billing", redisdedup.Config{Owner: "replica-1", Lease: time.Millisecond})
			c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
				Topic: topic, Group: "billing",
				Client: runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
				Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
					body := string(c.Message().Body())
					if body == "slow" {
						close(started)
						<-release
					}
					handled <- body
					return nil
				}),
				Tuning: runtime.Tuning{Deduplicator: d, Concurrency: mode.c},
			})
			if err != nil {
				t.Fatal(err)
			}
			stop, done := make(chan struct{}), make(chan error, 1)
			go func() { done <- c.Run(t.Context(), nil, stop) }()
			<-started
			// Meanwhile another replica (the partition moved to it) took
			// order-2 once its claim lapsed, and handled it.
			other := redisdedup.New(rdb, "billing", redisdedup.Config{Owner: "replica-2"})
			key := dedup.Key("shop", "order-2")
			for {
				fresh, err := other.Observe(t.Context(), key)
				if fresh {
					break
				}
				if !errors.Is(err, redisdedup.ErrClaimed) {
					t.Fatalf("observe = %v, %v", fresh, err)
				}
			}
			if err := other.Complete(t.Context(), key); err != nil {
				t.Fatal(err)
			}
			close(release)
			send(t, log, conv, "order-3", "third")
			if got := drain(t, handled, 2); got[0] != "slow" || got[1] != "third" {
				t.Fatalf("handled %q; order-2 was handled by the other replica and must be dropped", got)
			}
			close(stop)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestConsumerReleasesTheClaimOfARecordAGateBeforeDedupDropped(t *testing.T) {
	for _, mode := range modes[:2] { // PerConversation claims key by key
		t.Run(mode.name, func(t *testing.T) {
			rdb, log := setup(t)
			conv := wire.IDFromUint128(13, 1)
			client := runtime.NewClient(log, runtime.ClientConfig{})
			for _, c := range []struct {
				key   string
				fence uint64
			}{{"order-1", 2}, {"order-stale", 1}, {"order-3", 2}} {
				f := c.fence
				prov := wire.Provenance{Conversation: conv, Agent: "shop", IdempotencyKey: c.key, Fence: &f}
				if _, err := client.SendPlain(t.Context(), topic, prov, []byte(c.key)); err != nil {
					t.Fatal(err)
				}
			}
			handled := make(chan string, 4)
			stop := consumerWith(t, log, redisdedup.New(rdb, "billing"), handled, mode.c)
			if got := drain(t, handled, 2); got[0] != "order-1" || got[1] != "order-3" {
				t.Fatalf("handled %q; the record of a superseded fence must be dropped", got)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			// Its key was claimed with the batch and never used: the claim
			// is taken back, not left to hold another replica for a lease.
			fresh, err := redisdedup.New(rdb, "billing").Observe(t.Context(), dedup.Key("shop", "order-stale"))
			if !fresh || err != nil {
				t.Fatalf("observe of the dropped record's key = %v, %v; want it free", fresh, err)
			}
		})
	}
}
