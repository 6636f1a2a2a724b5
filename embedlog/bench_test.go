package embedlog_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/wire"
)

func BenchmarkPublish(b *testing.B) {
	l := embedlog.New("laser", embedlog.Config{})
	ctx := context.Background()
	if err := l.EnsureTopics(ctx, 4, "t"); err != nil {
		b.Fatal(err)
	}
	rec := runtime.Outgoing{
		Key:     "conversation-0123456789",
		Headers: wire.Headers{{Key: wire.HeaderContentType, Value: wire.Uint8Value(3)}, {Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(1)}},
		Payload: make([]byte, 256),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Publish(ctx, "t", rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPublishBatch publishes the records of BenchmarkPublish 512 to a
// call, the batching producer's default batch; an op is one record, so its
// ns/op sits beside BenchmarkPublish's. It is the floor of a batching
// producer on this log: every record is still copied into the log.
func BenchmarkPublishBatch(b *testing.B) {
	l := embedlog.New("laser", embedlog.Config{})
	ctx := context.Background()
	if err := l.EnsureTopics(ctx, 4, "t"); err != nil {
		b.Fatal(err)
	}
	recs := make([]runtime.Outgoing, 512)
	for i := range recs {
		recs[i] = runtime.Outgoing{
			Key:     "conversation-0123456789",
			Headers: wire.Headers{{Key: wire.HeaderContentType, Value: wire.Uint8Value(3)}, {Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(1)}},
			Payload: make([]byte, 256),
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for left := b.N; left > 0; left -= len(recs) {
		if _, err := l.Publish(ctx, "t", recs[:min(left, len(recs))]...); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPollCommit(b *testing.B) {
	l := embedlog.New("laser", embedlog.Config{})
	ctx := context.Background()
	if err := l.EnsureTopics(ctx, 4, "t"); err != nil {
		b.Fatal(err)
	}
	recs := make([]runtime.Outgoing, 64)
	for i := range recs {
		recs[i] = runtime.Outgoing{Headers: wire.Headers{{Key: wire.HeaderContentType, Value: wire.Uint8Value(3)}}, Payload: make([]byte, 256)}
	}
	sub, err := l.Join(ctx, "t", "g")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if _, err := l.Publish(ctx, "t", recs...); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for n := 0; n < len(recs); {
			got, err := sub.Poll(ctx, 64)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range got {
				if err := sub.Commit(ctx, r.Partition, r.Offset); err != nil {
					b.Fatal(err)
				}
			}
			n += len(got)
		}
	}
}

// BenchmarkLatency times publish-to-handler delivery to an idle consumer on
// the embedded log (see transporttest.Latency).
func BenchmarkLatency(b *testing.B) {
	l := embedlog.New("laser", embedlog.Config{})
	transporttest.Latency(b, l, l)
}
