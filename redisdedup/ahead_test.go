package redisdedup_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// claimWatch is the Redis deduplicator reporting the keys of every
// ClaimBatch call that succeeded.
type claimWatch struct {
	*redisdedup.Deduplicator
	claimed chan []string
}

func watchClaims(d *redisdedup.Deduplicator) *claimWatch {
	return &claimWatch{Deduplicator: d, claimed: make(chan []string, 64)}
}

func (w *claimWatch) ClaimBatch(ctx context.Context, keys []string, states []dedup.KeyState) error {
	err := w.Deduplicator.ClaimBatch(ctx, keys, states)
	if err == nil {
		select {
		case w.claimed <- slices.Clone(keys):
		default:
		}
	}
	return err
}

// waitClaimed returns once a ClaimBatch call claimed key.
func (w *claimWatch) waitClaimed(t *testing.T, key string) {
	t.Helper()
	for {
		select {
		case keys := <-w.claimed:
			if slices.Contains(keys, key) {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%q was never claimed", key)
		}
	}
}

// blockedConsumer runs a consumer (conc) of topic with d whose handler
// holds the record with body "slow" until release closes; started closes
// when it begins. It returns the stop channel and Run's result.
func blockedConsumer(t *testing.T, log *embedlog.Log, d dedup.Deduplicator, handled chan<- string, conc runtime.Concurrency) (started, release, stop chan struct{}, done chan error) {
	t.Helper()
	started, release = make(chan struct{}), make(chan struct{})
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
		Tuning: runtime.Tuning{Deduplicator: d, Concurrency: conc},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop, done = make(chan struct{}), make(chan error, 1)
	go func() { done <- c.Run(t.Context(), nil, stop) }()
	return started, release, stop, done
}

// claimedBy fails unless the Redis key holds a claim (of any owner).
func claimedBy(t *testing.T, rdb *redis.Client, key string) {
	t.Helper()
	if v, err := rdb.Get(t.Context(), key).Result(); err != nil || !strings.HasPrefix(v, "c|") {
		t.Fatalf("key holds %q, %v; want a claim", v, err)
	}
}

func TestConsumerClaimsTheNextBatchWhileTheCurrentOneIsHandled(t *testing.T) {
	for _, mode := range modes[:1] { // only Serial claims ahead: lanes claim their runs as they start them
		t.Run(mode.name, func(t *testing.T) {
			rdb, log := setup(t)
			conv := wire.IDFromUint128(21, 1)
			send(t, log, conv, "order-1", "slow")
			d := watchClaims(redisdedup.New(rdb, "billing"))
			handled := make(chan string, 4)
			started, release, stop, done := blockedConsumer(t, log, d, handled, mode.c)
			<-started
			send(t, log, conv, "order-2", "second")
			// The handler of "slow" has not returned: the claim is made ahead.
			key := dedup.Key("shop", "order-2")
			d.waitClaimed(t, key)
			claimedBy(t, rdb, d.Key(key))
			close(release)
			if got := drain(t, handled, 2); got[0] != "slow" || got[1] != "second" {
				t.Fatalf("handled %q", got)
			}
			close(stop)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			remembered(t, rdb, d.Key(key))
		})
	}
}

func TestConsumerReleasesTheClaimsOfABatchClaimedAheadAndNeverHandled(t *testing.T) {
	for _, mode := range modes[:1] { // only Serial claims ahead: lanes claim their runs as they start them
		t.Run(mode.name, func(t *testing.T) {
			rdb, log := setup(t)
			conv := wire.IDFromUint128(22, 1)
			send(t, log, conv, "order-1", "slow")
			d := watchClaims(redisdedup.New(rdb, "billing"))
			handled := make(chan string, 4)
			started, release, stop, done := blockedConsumer(t, log, d, handled, mode.c)
			<-started
			send(t, log, conv, "order-2", "second")
			key := dedup.Key("shop", "order-2")
			d.waitClaimed(t, key)
			// Stopped while "slow" runs: "second" was claimed and is never handled.
			close(stop)
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got := next(t, handled); got != "slow" {
				t.Fatalf("handled %q, want slow", got)
			}
			select {
			case got := <-handled:
				t.Fatalf("handled %q after the stop", got)
			default:
			}
			// Its claim was taken back: the partition's next owner need not wait
			// out a lease.
			fresh, err := redisdedup.New(rdb, "billing").Observe(t.Context(), key)
			if !fresh || err != nil {
				t.Fatalf("observe of the unhandled record's key = %v, %v; want it free", fresh, err)
			}
		})
	}
}

func TestConsumerRenewsAClaimMadeAheadThatAgedBeforeItsRecordStarts(t *testing.T) {
	for _, mode := range modes[:1] { // only Serial claims ahead: lanes claim their runs as they start them
		t.Run(mode.name, func(t *testing.T) {
			rdb, log := setup(t)
			conv := wire.IDFromUint128(23, 1)
			send(t, log, conv, "order-1", "slow")
			// A lease of 1 ms: the claim made ahead lapses while "slow" runs.
			d := watchClaims(redisdedup.New(rdb, "billing", redisdedup.Config{Owner: "replica-1", Lease: time.Millisecond}))
			handled := make(chan string, 4)
			started, release, stop, done := blockedConsumer(t, log, d, handled, mode.c)
			<-started
			send(t, log, conv, "order-2", "second")
			key := dedup.Key("shop", "order-2")
			d.waitClaimed(t, key)
			// Meanwhile another replica took order-2 once that claim lapsed, and
			// handled it.
			other := redisdedup.New(rdb, "billing", redisdedup.Config{Owner: "replica-2"})
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

// nameCounter counts the commands a client sends by name, alone or in a
// pipeline.
type nameCounter struct {
	mu    sync.Mutex
	names map[string]int
}

func (c *nameCounter) add(cmds ...redis.Cmder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cmd := range cmds {
		c.names[cmd.Name()]++
	}
}

func (c *nameCounter) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names[name]
}

func (c *nameCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *nameCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd)
		return next(ctx, cmd)
	}
}
func (c *nameCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.add(cmds...)
		return next(ctx, cmds)
	}
}

func TestClaimBatchClaimsFreshKeysWithPlainSetsAndNoScript(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	lease := time.Hour
	d := redisdedup.New(rdb, "g", redisdedup.Config{Lease: lease})
	claimBatch(t, d, "warm-up")
	counter := &nameCounter{names: map[string]int{}}
	rdb.AddHook(counter)
	if got := claimBatch(t, d, "a", "b", "c"); fmt.Sprint(got) != fmt.Sprint([]dedup.KeyState{dedup.KeyClaimed, dedup.KeyClaimed, dedup.KeyClaimed}) {
		t.Fatalf("states %v, want all claimed", got)
	}
	if s, e, es := counter.count("set"), counter.count("eval"), counter.count("evalsha"); s != 3 || e+es != 0 {
		t.Fatalf("%d SETs and %d scripts for 3 fresh keys; want one SET each and no script", s, e+es)
	}
	// The SET's claim is a real one, with the lease.
	if ttl := rdb.PTTL(t.Context(), d.Key("a")).Val(); ttl <= lease-time.Minute || ttl > lease {
		t.Fatalf("claim expires in %v, want about the lease of %v", ttl, lease)
	}
	// A key this incarnation holds goes to the script, which renews it.
	if err := rdb.PExpire(t.Context(), d.Key("a"), time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if got := claimBatch(t, d, "a", "d"); got[0] != dedup.KeyHeld || got[1] != dedup.KeyClaimed {
		t.Fatalf("states %v, want held and claimed", got)
	}
	if es := counter.count("evalsha"); es != 1 {
		t.Fatalf("%d script calls for one held key, want one", es)
	}
	if ttl := rdb.PTTL(t.Context(), d.Key("a")).Val(); ttl <= lease-time.Minute {
		t.Fatalf("a held claim expires in %v, want its lease started again", ttl)
	}
}

func TestCompleteBatchLoadsItsScriptAgainAfterRedisLostIt(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	d := redisdedup.New(rdb, "g")
	claimBatch(t, d, "a", "b")
	if err := d.CompleteBatch(t.Context(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	// As after a restart: the scripts are gone, the deduplicator does not know.
	if err := rdb.ScriptFlush(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := d.CompleteBatch(t.Context(), []string{"b"}); err != nil {
		t.Fatalf("complete after the scripts were flushed: %v", err)
	}
	remembered(t, rdb, d.Key("b"))
	if n := rdb.ZCard(t.Context(), d.Key("")[:len(d.Key(""))-len("k:")]+"w").Val(); n != 2 {
		t.Fatalf("window holds %d keys, want both", n)
	}
}
