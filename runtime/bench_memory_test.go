package runtime_test

import (
	"context"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// BenchmarkInFlightMemory reports the heap a consumer holds for the records
// it has taken from the log but not finished: plain 256-byte messages,
// handlers that block, so intake fills every bound (with lanes the global
// MaxQueuedRecords, 1,024 here, and PerConversation as much less the
// records it defers; Serial the batch in hand and the one read ahead) before the heap is measured. inflight-B/record is the heap
// growth divided by the records polled.
func BenchmarkInFlightMemory(b *testing.B) {
	for _, bc := range []struct {
		name string
		c    runtime.Concurrency
	}{{"serial", runtime.Serial}, {"lanes4", runtime.PerPartition(4)}, {"perconversation256", runtime.PerConversation(256)}} {
		b.Run(bc.name, func(b *testing.B) {
			const queued, batch = 1024, 256
			var perRecord, total float64
			for b.Loop() {
				total, perRecord = inFlightHeap(b, bc.c, queued, batch)
			}
			b.ReportMetric(total, "inflight-B")
			b.ReportMetric(perRecord, "inflight-B/record")
		})
	}
}

func inFlightHeap(b *testing.B, conc runtime.Concurrency, queued, batch int) (total, perRecord float64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := embedlog.New("laser", embedlog.Config{})
	if err := l.EnsureTopics(ctx, 4, topic, dlq); err != nil {
		b.Fatal(err)
	}
	p := runtime.NewClient(l, runtime.ClientConfig{})
	payload := make([]byte, 256)
	for i := range 4 * queued {
		prov := wire.Provenance{Conversation: wire.IDFromUint128(5, uint64(i)), Agent: sender, IdempotencyKey: "k"}
		prov.IdempotencyKey = prov.Conversation.String()
		if _, err := p.SendPlain(ctx, topic, prov, payload); err != nil {
			b.Fatal(err)
		}
	}
	polled := &countingPolls{Transport: l}
	release := make(chan struct{})
	c, err := runtime.NewConsumer(polled, runtime.ConsumerConfig{
		Topic:   topic,
		Group:   agent,
		Agent:   agent,
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error { <-release; return nil }),
		Client:  runtime.NewClient(polled, runtime.ClientConfig{Logger: quietLogger()}),
		Tuning: runtime.Tuning{
			Concurrency:      conc,
			PollBatch:        batch,
			MaxQueuedRecords: queued,
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	before := heapInUse()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil, nil) }()
	// Wait until intake stops growing: every bound is full.
	last := -1
	for polled.records() != last {
		last = polled.records()
		time.Sleep(100 * time.Millisecond)
	}
	after := heapInUse()
	close(release)
	cancel()
	<-done
	grown := float64(after) - float64(before)
	return grown, grown / float64(last)
}

func heapInUse() uint64 {
	goruntime.GC()
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapAlloc
}
