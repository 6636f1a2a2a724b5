package redisdedup_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
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

const topic = "agent.commands"

// consumer runs a consumer of topic with d until the test ends or stop
// closes; handled receives each body handled.
func consumer(t *testing.T, log *embedlog.Log, d dedup.Deduplicator, handled chan<- string) (stop func() error) {
	t.Helper()
	return consumerWith(t, log, d, handled, runtime.Serial)
}

// consumerWith is consumer with the given concurrency.
func consumerWith(t *testing.T, log *embedlog.Log, d dedup.Deduplicator, handled chan<- string, conc runtime.Concurrency) (stop func() error) {
	t.Helper()
	c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
		Topic: topic,
		Group: "billing",
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			handled <- string(c.Message().Body())
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Tuning: runtime.Tuning{
			Deduplicator: d,
			Concurrency:  conc,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stopCh, done := make(chan struct{}), make(chan error, 1)
	ready := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { done <- c.Run(ctx, func() { close(ready) }, stopCh) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("consumer stopped: %v", err)
	}
	return func() error { close(stopCh); return <-done }
}

func send(t *testing.T, log *embedlog.Log, conv wire.ID, key, body string) {
	t.Helper()
	prov := wire.Provenance{Conversation: conv, Agent: "shop", IdempotencyKey: key}
	if _, err := runtime.NewClient(log, runtime.ClientConfig{}).SendPlain(context.Background(), topic, prov, []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// setup starts Redis and returns a client of it and an embedded log
// holding topic.
func setup(t *testing.T) (*redis.Client, *embedlog.Log) {
	t.Helper()
	rdb := client(t, redistest.Start(t).Addr())
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(context.Background(), 1, topic, runtime.TopicDLQ); err != nil {
		t.Fatal(err)
	}
	return rdb, log
}

// remembered fails unless the Redis key holds a remembered (completed)
// mark, not a claim.
func remembered(t *testing.T, rdb *redis.Client, key string) {
	t.Helper()
	if v, err := rdb.Get(context.Background(), key).Result(); err != nil || v != "d" {
		t.Fatalf("key holds %q, %v; want it remembered", v, err)
	}
}

func next(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("nothing handled")
		return ""
	}
}

func TestConsumerDropsADuplicateAcrossARestartWithoutWarmDedup(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(context.Background(), 1, topic, runtime.TopicDLQ); err != nil {
		t.Fatal(err)
	}
	conv := wire.IDFromUint128(1, 1)
	handled := make(chan string, 8)
	stop := consumer(t, log, redisdedup.New(rdb, "billing"), handled)
	send(t, log, conv, "order-1", "first")
	if got := next(t, handled); got != "first" {
		t.Fatalf("handled %q", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// A new process: empty memory, the same Redis. The sender retried.
	stop = consumer(t, log, redisdedup.New(rdb, "billing"), handled)
	send(t, log, conv, "order-1", "retry of first")
	send(t, log, conv, "order-2", "second")
	if got := next(t, handled); got != "second" {
		t.Fatalf("handled %q; the retry must be dropped as a duplicate", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestConsumerWaitsOutARedisOutageAndHandlesTheRecordOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(context.Background(), 1, topic, runtime.TopicDLQ); err != nil {
		t.Fatal(err)
	}
	handled := make(chan string, 8)
	stop := consumer(t, log, redisdedup.New(rdb, "billing"), handled)
	srv.Stop()
	send(t, log, wire.IDFromUint128(1, 2), "order-1", "during the outage")
	select {
	case got := <-handled:
		t.Fatalf("%q was handled while the deduplicator was down", got)
	case <-time.After(300 * time.Millisecond): // several retries of the dedup
	}
	if _, ok, _ := log.StoredOffset(context.Background(), topic, "billing", 0); ok {
		t.Fatal("the record was committed while the deduplicator was down")
	}
	srv.Restart()
	if got := next(t, handled); got != "during the outage" {
		t.Fatalf("handled %q", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if off, ok, _ := log.StoredOffset(context.Background(), topic, "billing", 0); !ok || off != 0 {
		t.Fatalf("stored offset %d, %v", off, ok)
	}
}

func TestWarmDedupOnRedisRemembersCommittedKeysWithoutHoldingClaims(t *testing.T) {
	rdb, log := setup(t)
	ctx := context.Background()
	conv := wire.IDFromUint128(1, 3)
	send(t, log, conv, "order-1", "handled before")
	// A previous process handled it and committed, but left no mark.
	sub, err := log.Join(ctx, topic, "billing")
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Commit(ctx, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := sub.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	d := redisdedup.New(rdb, "billing")
	handled := make(chan string, 4)
	c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
		Topic:   topic,
		Group:   "billing",
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error { handled <- string(c.Message().Body()); return nil }),
		Client:  runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Tuning: runtime.Tuning{
			Deduplicator: d,
			WarmDedup:    true,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- c.Run(ctx, nil, stop) }()
	send(t, log, conv, "order-1", "retry of the handled one")
	send(t, log, conv, "order-2", "new")
	if got := next(t, handled); got != "new" {
		t.Fatalf("handled %q; the warmed key must be a duplicate at once, not a claim to wait for", got)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	remembered(t, rdb, d.Key(dedup.Key("shop", "order-1")))
}

// flakyComplete is the Redis deduplicator whose Complete and
// CompleteBatch fail (as an unreachable Redis does) while fails is
// positive, counting down.
type flakyComplete struct {
	*redisdedup.Deduplicator
	fails, calls atomic.Int32
}

func (f *flakyComplete) CompleteBatch(ctx context.Context, keys []string) error {
	f.calls.Add(1)
	if f.fails.Add(-1) >= 0 {
		return &redisdedup.Error{Op: "complete", Transient: true, Err: errors.New("connection refused")}
	}
	return f.Deduplicator.CompleteBatch(ctx, keys)
}

func (f *flakyComplete) Complete(ctx context.Context, key string) error {
	f.calls.Add(1)
	if f.fails.Add(-1) >= 0 {
		return &redisdedup.Error{Op: "complete", Transient: true, Err: errors.New("connection refused")}
	}
	return f.Deduplicator.Complete(ctx, key)
}

func TestConsumerRetriesAFailedCompleteSoTheKeyIsRememberedBeforeTheCommit(t *testing.T) {
	rdb, log := setup(t)
	d := &flakyComplete{Deduplicator: redisdedup.New(rdb, "billing", redisdedup.Config{Lease: 50 * time.Millisecond})}
	d.fails.Store(2)
	handled := make(chan string, 8)
	stop := consumer(t, log, d, handled)
	conv := wire.IDFromUint128(1, 4)
	send(t, log, conv, "order-1", "first")
	if got := next(t, handled); got != "first" {
		t.Fatalf("handled %q", got)
	}
	// Past the claim's lease: a key left a claim would let this through.
	time.Sleep(100 * time.Millisecond)
	send(t, log, conv, "order-1", "duplicate of first")
	send(t, log, conv, "order-2", "second")
	if got := next(t, handled); got != "second" {
		t.Fatalf("handled %q; the duplicate must be dropped", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n := d.calls.Load(); n < 4 {
		t.Fatalf("Complete called %d times; want the two failures retried", n)
	}
	remembered(t, rdb, d.Key(dedup.Key("shop", "order-1")))
}

func TestConsumerThatCannotCompleteAKeyStopsTransientlyWithTheRecordUncommitted(t *testing.T) {
	rdb, log := setup(t)
	ctx := context.Background()
	d := &flakyComplete{Deduplicator: redisdedup.New(rdb, "billing")}
	d.fails.Store(1 << 30)
	c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
		Topic: topic, Group: "billing",
		Client:  runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error { return nil }),
		Tuning:  runtime.Tuning{Deduplicator: d},
	})
	if err != nil {
		t.Fatal(err)
	}
	send(t, log, wire.IDFromUint128(1, 5), "order-1", "first")
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil, make(chan struct{})) }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the consumer kept going although the key could not be completed")
	}
	if !errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("Run returned %v; want a transient error", err)
	}
	if n := d.calls.Load(); n < 10 {
		t.Fatalf("Complete called %d times; want it retried ten times", n)
	}
	if off, ok, _ := log.StoredOffset(ctx, topic, "billing", 0); ok {
		t.Fatalf("offset %d committed although its key is still a claim", off)
	}
}
