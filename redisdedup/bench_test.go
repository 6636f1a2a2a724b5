package redisdedup_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lasergo/laser/internal/redistest"
	"github.com/lasergo/laser/memlog"
	"github.com/lasergo/laser/redisdedup"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// BenchmarkConsumerDedup measures the consumer's throughput on the embedded
// log with every message carrying an idempotency key, deduplicated in
// memory (the default window) and on a local redis-server, Serial and with
// four lanes; compare msgs/s side by side.
func BenchmarkConsumerDedup(b *testing.B) {
	srv := redistest.Start(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	b.Cleanup(func() { _ = rdb.Close() })
	run := 0
	for _, store := range []string{"memory", "redis"} {
		for _, conc := range []struct {
			name string
			c    runtime.Concurrency
		}{{"serial", runtime.Serial}, {"lanes4", runtime.PerPartition(4)}} {
			b.Run(store+"/"+conc.name, func(b *testing.B) {
				run++
				var dedup runtime.Deduplicator = runtime.NewSlidingWindow(runtime.DefaultDedupWindow)
				if store == "redis" {
					dedup = redisdedup.New(rdb, fmt.Sprintf("bench-%d", run))
				}
				benchConsume(b, conc.c, dedup)
			})
		}
	}
}

func benchConsume(b *testing.B, c runtime.Concurrency, dedup runtime.Deduplicator) {
	log := memlog.New("bench")
	ctx := context.Background()
	if err := log.EnsureTopics(ctx, 4, topic, runtime.DefaultDeadLetterTopic); err != nil {
		b.Fatal(err)
	}
	p := runtime.NewProducer(log, runtime.ProducerOptions{})
	batch := make([]runtime.Outgoing, 0, 256)
	flush := func() {
		if _, err := p.Publish(ctx, topic, batch...); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := 0; i < b.N; i++ {
		prov := wire.Provenance{Conversation: wire.IDFromUint128(3, uint64(i%256)), Agent: "shop", IdempotencyKey: fmt.Sprintf("k-%d", i)}
		headers, err := prov.Headers()
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: []byte(`{"n":1}`)})
		if len(batch) == cap(batch) {
			flush()
		}
	}
	flush()
	done := make(chan struct{})
	var n atomic.Int64
	consumer, err := runtime.NewConsumer(log, runtime.ConsumerConfig{Topic: topic, Group: "bench", Concurrency: c,
		Deduplicator: dedup, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PollBatch: 256,
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error {
			if n.Add(1) == int64(b.N) {
				close(done)
			}
			return nil
		})})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	go func() { errc <- consumer.Run(ctx, nil, stop) }()
	<-done
	elapsed := time.Since(start)
	b.StopTimer()
	close(stop)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}
