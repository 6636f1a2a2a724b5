package runtime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/wire"
)

// BenchmarkConsumerThroughput measures messages per second through the
// embedded log: b.N AGDX commands (dedup and fence on) published up front,
// then consumed by a no-op handler, for Serial, for 4 lanes and for
// PerConversation(256) (whose fast path must keep up with Serial's).
func BenchmarkConsumerThroughput(b *testing.B) {
	for _, bc := range []struct {
		name string
		c    runtime.Concurrency
	}{{"serial", runtime.Serial}, {"lanes4", runtime.PerPartition(4)}, {"perconversation256", runtime.PerConversation(256)}} {
		b.Run(bc.name, func(b *testing.B) { benchConsume(b, bc.c, nil) })
	}
}

// benchConsume publishes b.N AGDX commands, each with its own idempotency
// key and a fence, and times a consumer with a no-op handler and dedup
// (nil: the default in-memory window) through all of them.
func benchConsume(b *testing.B, conc runtime.Concurrency, dedup dedup.Deduplicator) {
	log := embedlog.New("bench", embedlog.Config{})
	ctx := context.Background()
	if err := log.EnsureTopics(ctx, 4, topic, dlq); err != nil {
		b.Fatal(err)
	}
	p := runtime.NewClient(log, runtime.ClientOptions{}).Producer()
	batch := make([]runtime.Outgoing, 0, 256)
	flush := func() {
		if _, err := p.Publish(ctx, topic, batch...); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := 0; i < b.N; i++ {
		rec, corr := wire.IDFromUint128(1, uint64(i)), wire.IDFromUint128(2, uint64(i))
		key := wire.IdempotencyKey(fmt.Sprintf("k-%d", i))
		env := &wire.Envelope{Kind: wire.KindCommand, Record: &rec, Conversation: wire.IDFromUint128(3, uint64(i%256)),
			Source: "planner", Correlation: &corr, IdempotencyKey: &key,
			Metadata: wire.Metadata{{Key: wire.HeaderFence, Value: wire.UintValue(1)}}, Body: []byte(`{"n":1}`)}
		payload, _ := env.Marshal()
		batch = append(batch, runtime.Outgoing{Key: wire.PartitionKey(env.Conversation), Headers: wire.EnvelopeHeaders(env, wire.ContentJSON), Payload: payload})
		if len(batch) == cap(batch) {
			flush()
		}
	}
	flush()
	done := make(chan struct{})
	var n atomic.Int64
	c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
		Topic: topic,
		Group: agent,
		Agent: agent,
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error {
			if n.Add(1) == int64(b.N) {
				close(done)
			}
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientOptions{Logger: quietLogger()}),
		Tuning: runtime.Tuning{
			Concurrency:  conc,
			Deduplicator: dedup,
			PollBatch:    256,
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	go func() { errc <- c.Run(ctx, nil, stop) }()
	<-done
	elapsed := time.Since(start)
	b.StopTimer()
	close(stop)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
}

// BenchmarkSlowHandler measures a handler that waits 20 ms (a fast model or
// API call) on the embedded log: Serial, PerPartition(4) and
// PerConversation(256) side by side over 512 conversations × 4 records on
// one partition, each with msgs/s and x/ideal (see
// transporttest.SlowHandler).
func BenchmarkSlowHandler(b *testing.B) {
	transporttest.SlowHandler(b, func(*testing.B) runtime.Transport { return embedlog.New("bench", embedlog.Config{}) })
}
