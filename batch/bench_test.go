package batch_test

import (
	"context"
	"fmt"
	"os"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/batch"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/internal/proccpu"
	"github.com/lasergo/laser/runtime"
)

// benchRecordSize is the payload size the goal is stated at.
const benchRecordSize = 256

// benchLogs returns the logs the publish benchmarks run on: the embedded log,
// and Iggy when LASER_IGGY_ADDR names a server.
func benchLogs(b *testing.B) map[string]func(*testing.B) runtime.Transport {
	logs := map[string]func(*testing.B) runtime.Transport{
		"embedlog": func(*testing.B) runtime.Transport { return embedlog.New("bench", embedlog.Config{}) },
		"iggytest": func(b *testing.B) runtime.Transport {
			return dial(b, "iggy://iggy:iggy@"+iggytest.Start(b, iggytest.Config{}).Addr()+"/bench")
		},
	}
	if addr := os.Getenv(featuretest.RealServerEnv); addr != "" {
		logs["iggy"] = func(b *testing.B) runtime.Transport { return dial(b, addr) }
	}
	return logs
}

// dial connects to an Iggy server, closing the transport when b ends.
func dial(b *testing.B, addr string) runtime.Transport {
	tr, err := iggy.Dial(b.Context(), addr, iggy.Config{})
	if err != nil {
		b.Fatalf("dial %s: %v", addr, err)
	}
	b.Cleanup(func() { _ = tr.Close() })
	return tr
}

// topicSeq names each benchmark run's topic.
var topicSeq atomic.Int64

// benchProducer returns the client producer on a fresh topic of log.
func benchProducer(b *testing.B, log runtime.Transport) (*runtime.Client, string) {
	topic := fmt.Sprintf("bench.publish.%d.%d", time.Now().UnixNano(), topicSeq.Add(1))
	if err := log.EnsureTopics(b.Context(), 1, topic); err != nil {
		b.Fatal(err)
	}
	return runtime.NewClient(log, runtime.ClientConfig{}), topic
}

func publishSingle(ctx context.Context, b *testing.B, p *runtime.Client, topic string, n int) {
	payload := make([]byte, benchRecordSize)
	for range n {
		if _, err := p.Publish(ctx, topic, runtime.Outgoing{Key: "k", Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
}

func publishBatched(ctx context.Context, b *testing.B, p *runtime.Client, topic string, n int) {
	bp, err := batch.New(ctx, p, topic, batch.Config{})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, benchRecordSize)
	var last batch.Pending
	for range n {
		last = bp.Append(ctx, runtime.Outgoing{Key: "k", Payload: payload})
	}
	if err := bp.Close(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := last.Wait(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPublishSingle publishes 256-byte records one call at a time.
func BenchmarkPublishSingle(b *testing.B) {
	for name, open := range benchLogs(b) {
		b.Run(name, func(b *testing.B) {
			p, topic := benchProducer(b, open(b))
			b.ReportAllocs()
			b.ResetTimer()
			publishSingle(b.Context(), b, p, topic, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkPublishBatched appends 256-byte records to a batching producer
// with its default bounds and waits for the last.
func BenchmarkPublishBatched(b *testing.B) {
	for name, open := range benchLogs(b) {
		b.Run(name, func(b *testing.B) {
			p, topic := benchProducer(b, open(b))
			b.ReportAllocs()
			b.ResetTimer()
			publishBatched(b.Context(), b, p, topic, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// topicDeleter is a log that drops a topic's records, as the embedded log does.
type topicDeleter interface{ DeleteTopic(name string) error }

// BenchmarkPublishRatio publishes the same records both ways in each
// iteration and reports how many times faster batching is as
// batching/single, in wall time and in the process's CPU time (steadier on
// a loaded machine). Each run gets a fresh topic and a collected heap, and
// the two ways take turns going first, so neither pays for the other's
// garbage or finds the machine warmer.
func BenchmarkPublishRatio(b *testing.B) {
	const n = 10_000
	for name, open := range benchLogs(b) {
		b.Run(name, func(b *testing.B) {
			log := open(b)
			ways := [2]func(context.Context, *testing.B, *runtime.Client, string, int){publishSingle, publishBatched}
			var took, cpu [2]time.Duration
			for i := 0; b.Loop(); i++ {
				for j := range ways {
					way := (i + j) % 2
					p, topic := benchProducer(b, log)
					b.StopTimer()
					goruntime.GC()
					b.StartTimer()
					start, startCPU := time.Now(), proccpu.Used()
					ways[way](b.Context(), b, p, topic, n)
					took[way] += time.Since(start)
					cpu[way] += proccpu.Used() - startCPU
					if d, ok := log.(topicDeleter); ok {
						// The embedded log would keep every run's records
						// live, making each collection slower than the last.
						if err := d.DeleteTopic(topic); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			b.ReportMetric(took[0].Seconds()/took[1].Seconds(), "batching/single")
			b.ReportMetric(float64(n*b.N)/took[0].Seconds(), "single-records/s")
			b.ReportMetric(float64(n*b.N)/took[1].Seconds(), "batched-records/s")
			if cpu[1] > 0 {
				b.ReportMetric(cpu[0].Seconds()/cpu[1].Seconds(), "batching/single-cpu")
			}
		})
	}
}
