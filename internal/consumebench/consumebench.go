// Package consumebench is the consumer throughput benchmark's body, shared by
// the runtime's benchmarks and the Redis deduplicator's (another module), so
// both time the same work.
package consumebench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Rate publishes b.N AGDX commands to the embedded log, each with its own
// idempotency key and a fence, times a consumer with a no-op handler
// deduplicating on dedup (nil: the default in-memory window) through all of
// them and returns the messages per second.
func Rate(b *testing.B, conc runtime.Concurrency, dedup dedup.Deduplicator) float64 {
	const topic, dlq, agent = "agent.commands", "agent.dlq", "worker"
	log := embedlog.New("bench", embedlog.Config{})
	ctx := context.Background()
	if err := log.EnsureTopics(ctx, 4, topic, dlq); err != nil {
		b.Fatal(err)
	}
	p := runtime.NewClient(log, runtime.ClientConfig{})
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
		payload, err := env.Marshal()
		if err != nil {
			b.Fatal(err)
		}
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
		Client: runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
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
	return float64(b.N) / elapsed.Seconds()
}
