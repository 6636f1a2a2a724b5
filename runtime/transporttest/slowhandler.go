package transporttest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The workload of SlowHandler: conversations × perConversation records on
// one partition, round-robin over the conversations (so every
// conversation's records are spread over the whole log), each handled by a
// handler that waits SlowLatency, as a call to a fast model or API does.
const (
	SlowLatency        = 20 * time.Millisecond
	slowConversations  = 512
	slowPerRecord      = 4
	slowHandlers       = 256
	slowSerialRecords  = 50 // Serial and lanes on one partition run at 1/latency whatever the count
	slowWorkloadRecord = slowConversations * slowPerRecord
)

// SlowHandler measures throughput with a handler that waits SlowLatency:
// Serial, PerPartition(4) and PerConversation(256) side by side over the
// same log of 512 conversations × 4 records on one partition. Each
// reports msgs/s and x/ideal, the rate divided by the most the mode can
// reach: min(handlers at once, conversations) ÷ latency, where Serial and
// lanes on one partition run one handler at a time. Serial and lanes
// handle the first 50 records of the log per iteration (2048 would take
// 41 s each, at the same rate); the new mode handles all of them.
func SlowHandler(b *testing.B, newTransport func(b *testing.B) runtime.Transport) {
	for _, bc := range []struct {
		name     string
		c        runtime.Concurrency
		records  int
		parallel int
	}{
		{"serial", runtime.Serial, slowSerialRecords, 1},
		{"lanes4", runtime.PerPartition(4), slowSerialRecords, 1},
		{fmt.Sprintf("perconversation%d", slowHandlers), runtime.PerConversation(slowHandlers), slowWorkloadRecord, slowHandlers},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var elapsed time.Duration
			total := 0
			for i := 0; i < b.N; i++ {
				elapsed += slowRun(b, newTransport(b), bc.c, bc.records)
				total += bc.records
			}
			rate := float64(total) / elapsed.Seconds()
			ideal := float64(min(bc.parallel, slowConversations)) / SlowLatency.Seconds()
			b.ReportMetric(rate, "msgs/s")
			b.ReportMetric(rate/ideal, "x/ideal")
			b.ReportMetric(0, "ns/op") // an iteration is a whole log; msgs/s is the figure
		})
	}
}

// slowRun publishes the first records of the workload to a fresh topic and
// times a consumer through them, from its start to the last handler's end.
func slowRun(b *testing.B, tr runtime.Transport, conc runtime.Concurrency, records int) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	topic, group := freshName(b, "slow"), freshName(b, "g")
	if err := tr.EnsureTopics(ctx, 1, topic); err != nil {
		b.Fatal(err)
	}
	batch := make([]runtime.Outgoing, 0, 256)
	for i := range records {
		prov := wire.Provenance{Conversation: wire.IDFromUint128(0x510e, uint64(i%slowConversations)), Agent: "bench"}
		headers, err := prov.Headers()
		if err != nil {
			b.Fatal(err)
		}
		batch = append(batch, runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: fmt.Appendf(nil, "%d", i)})
		if len(batch) == cap(batch) || i == records-1 {
			if _, err := tr.Publish(ctx, topic, batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	var n atomic.Int64
	var first sync.Once
	var firstAt time.Time
	done := make(chan struct{})
	c, err := runtime.NewConsumer(tr, runtime.ConsumerConfig{
		Topic: topic,
		Group: group,
		Agent: "worker",
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error {
			first.Do(func() { firstAt = time.Now() })
			time.Sleep(SlowLatency) // the handler's own latency, the subject of the benchmark
			if n.Add(1) == int64(records) {
				close(done)
			}
			return nil
		}),
		Client: runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Tuning: runtime.Tuning{Concurrency: conc, PollBatch: 256},
	})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	b.StartTimer()
	began := time.Now()
	go func() { errc <- c.Run(ctx, nil, stop) }()
	<-done
	// The rate is taken from the first record handled: joining the group
	// (a round trip or several to a real server) is start-up, not
	// throughput. The join is reported beside it as startup-ms.
	end := time.Now()
	elapsed := end.Sub(firstAt)
	b.ReportMetric(float64(firstAt.Sub(began).Microseconds())/1000, "startup-ms")
	b.StopTimer()
	close(stop)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	return elapsed
}
