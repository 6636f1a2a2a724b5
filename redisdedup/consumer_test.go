package redisdedup_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/memlog"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

const topic = "agent.commands"

// consumer runs a consumer of topic with d until the test ends or stop
// closes; handled receives each body handled.
func consumer(t *testing.T, log *memlog.Log, d runtime.Deduplicator, handled chan<- string) (stop func() error) {
	t.Helper()
	c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
		Topic: topic,
		Group: "billing",
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			handled <- string(c.Message().Body())
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Tuning: runtime.Tuning{
			Deduplicator: d,
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

func send(t *testing.T, log *memlog.Log, conv wire.ID, key, body string) {
	t.Helper()
	prov := wire.Provenance{Conversation: conv, Agent: "shop", IdempotencyKey: key}
	if _, err := runtime.NewProducer(log, runtime.ProducerOptions{}).SendPlain(context.Background(), topic, &prov, []byte(body)); err != nil {
		t.Fatal(err)
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
	log := memlog.New("laser")
	if err := log.EnsureTopics(context.Background(), 1, topic, runtime.DefaultDeadLetterTopic); err != nil {
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
	log := memlog.New("laser")
	if err := log.EnsureTopics(context.Background(), 1, topic, runtime.DefaultDeadLetterTopic); err != nil {
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
	srv := redistest.Start(t)
	rdb := client(t, srv.Addr())
	log := memlog.New("laser")
	ctx := context.Background()
	if err := log.EnsureTopics(ctx, 1, topic, runtime.DefaultDeadLetterTopic); err != nil {
		t.Fatal(err)
	}
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
		Client:  runtime.NewClient(log, runtime.ClientOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
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
	if v, err := rdb.Get(ctx, d.Key(runtime.DedupKey("shop", "order-1"))).Result(); err != nil || v != "d" {
		t.Fatalf("warmed key holds %q, %v; want it remembered", v, err)
	}
}
