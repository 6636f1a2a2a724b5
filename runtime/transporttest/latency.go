package transporttest

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// LatencySamples is how many messages one iteration of Latency times.
const LatencySamples = 1000

// Latency measures delivery latency over a log: it publishes one plain
// message at a time through publish to an idle reliable consumer on
// consume (default options, a no-op handler) and times each from just
// before the publish until the handler runs. Pass two connections to the
// same log to measure what another process would see, or one transport
// twice. Between samples it pauses a random 0 to 10 ms (the default
// poll interval), so publishes land at every phase of the consumer's idle
// polling rather than right after its last poll. It reports p50-µs, p99-µs
// and max-µs over LatencySamples samples per iteration.
func Latency(b *testing.B, consume, publish runtime.Transport) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	topic, group := freshName(b, "lat"), freshName(b, "g")
	if err := publish.EnsureTopics(ctx, 1, topic); err != nil {
		b.Fatal(err)
	}
	var sentAt atomic.Int64
	got := make(chan time.Duration, 1)
	c, err := runtime.NewConsumer(consume, runtime.ConsumerConfig{
		Topic: topic,
		Group: group,
		Agent: "worker",
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error {
			got <- time.Duration(time.Now().UnixNano() - sentAt.Load())
			return nil
		}),
		Client: runtime.NewClient(consume, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
	})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	ready := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx, func() { close(ready) }, stop) }()
	select {
	case <-ready:
	case err := <-errc:
		b.Fatalf("consumer stopped before ready: %v", err)
	}
	headers, err := (&wire.Provenance{Conversation: wire.IDFromUint128(9, 9), Agent: "bench"}).Headers()
	if err != nil {
		b.Fatal(err)
	}
	rec := runtime.Outgoing{Headers: headers, Payload: make([]byte, 256)}
	rng := rand.New(rand.NewPCG(1, 2))
	var samples []time.Duration
	for b.Loop() {
		for range LatencySamples {
			time.Sleep(time.Duration(rng.Int64N(int64(runtime.DefaultPollInterval))))
			sentAt.Store(time.Now().UnixNano())
			if err := appendRecords(ctx, publish, topic, rec); err != nil {
				b.Fatal(err)
			}
			select {
			case d := <-got:
				samples = append(samples, d)
			case err := <-errc:
				b.Fatalf("consumer stopped: %v", err)
			case <-time.After(30 * time.Second):
				b.Fatal("a message was not handled within 30 s")
			}
		}
	}
	close(stop)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	slices.Sort(samples)
	at := func(q float64) float64 {
		return float64(samples[int(q*float64(len(samples)-1))]) / float64(time.Microsecond)
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(at(1), "max-µs")
}

// appendRecords publishes without asking where records landed: with the
// transport's Append when it has one (runtime.Appender), otherwise with
// Publish, whose positions it drops.
func appendRecords(ctx context.Context, t runtime.Transport, topic string, records ...runtime.Outgoing) error {
	if a, ok := t.(runtime.Appender); ok {
		return a.Append(ctx, topic, records...)
	}
	_, err := t.Publish(ctx, topic, records...)
	return err
}
