package iggy_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

const (
	benchMessages = 50_000
	benchBatch    = 500
	benchPayload  = 256
)

// BenchmarkPollAndStore reads the same pre-published messages from the
// test server three times per iteration, each time as a fresh consumer
// group: with a bare SDK loop (group poll with "next", then store the last
// offset), through the transport (Subscription.Poll, then Commit), and
// through the full reliable consumer with a no-op handler. It reports the
// rates and the share of the bare loop's throughput the transport and the
// consumer keep (transport/sdk, consumer/sdk).
func BenchmarkPollAndStore(b *testing.B) {
	s, err := iggytest.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	tr, err := iggy.Dial(ctx, "iggy://iggy:iggy@"+s.Addr()+"/bench")
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	if err := tr.EnsureTopics(ctx, 1, "t"); err != nil {
		b.Fatal(err)
	}
	c := benchClient(b, s)
	stream, topic := benchIdent(b, "bench"), benchIdent(b, "t")
	// Plain messages with provenance headers: what the bare loop skims and
	// what the consumer fully decodes, dedups and dispatches.
	payload := make([]byte, benchPayload)
	for sent := 0; sent < benchMessages; sent += benchBatch {
		recs := make([]runtime.Outgoing, benchBatch)
		for i := range recs {
			prov := wire.Provenance{Conversation: wire.IDFromUint128(7, uint64(sent+i)), Agent: "bench", IdempotencyKey: fmt.Sprintf("k-%d", sent+i)}
			headers, err := prov.Headers()
			if err != nil {
				b.Fatal(err)
			}
			recs[i] = runtime.Outgoing{Headers: headers, Payload: payload}
		}
		if _, err := tr.Publish(ctx, "t", recs...); err != nil {
			b.Fatal(err)
		}
	}

	var sdkTime, trTime, consumerTime time.Duration
	round := 0
	for b.Loop() {
		round++
		start := time.Now()
		sdkLoop(b, c, stream, topic, fmt.Sprintf("sdk-%d", round))
		mid := time.Now()
		transportLoop(b, tr, fmt.Sprintf("tr-%d", round))
		late := time.Now()
		consumerLoop(b, tr, fmt.Sprintf("consumer-%d", round))
		sdkTime += mid.Sub(start)
		trTime += late.Sub(mid)
		consumerTime += time.Since(late)
	}
	sdkRate := float64(benchMessages*round) / sdkTime.Seconds()
	trRate := float64(benchMessages*round) / trTime.Seconds()
	consumerRate := float64(benchMessages*round) / consumerTime.Seconds()
	b.ReportMetric(sdkRate, "sdk-msgs/s")
	b.ReportMetric(trRate, "transport-msgs/s")
	b.ReportMetric(consumerRate, "consumer-msgs/s")
	b.ReportMetric(trRate/sdkRate, "transport/sdk")
	b.ReportMetric(consumerRate/sdkRate, "consumer/sdk")
}

// consumerLoop runs the full reliable consumer (decode, dedup, dispatch to
// a no-op handler, commit after success) over the same messages.
func consumerLoop(b *testing.B, tr *iggy.Transport, group string) {
	done := make(chan struct{})
	var n atomic.Int64
	c, err := runtime.NewConsumer(tr, runtime.ConsumerConfig{
		Topic: "t", Group: group, Agent: "worker", PollBatch: benchBatch,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error {
			if n.Add(1) == benchMessages {
				close(done)
			}
			return nil
		}),
	})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- c.Run(context.Background(), nil, stop) }()
	select {
	case <-done:
	case err := <-errc:
		b.Fatalf("consumer stopped: %v", err)
	}
	close(stop)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}

func sdkLoop(b *testing.B, c iggcon.Client, stream, topic iggcon.Identifier, group string) {
	if _, err := c.CreateConsumerGroup(stream, topic, group); err != nil {
		b.Fatal(err)
	}
	gid := benchIdent(b, group)
	if err := c.JoinConsumerGroup(stream, topic, gid); err != nil {
		b.Fatal(err)
	}
	consumer := iggcon.NewGroupConsumer(gid)
	for got := 0; got < benchMessages; {
		pm, err := c.PollMessages(stream, topic, consumer, iggcon.NextPollingStrategy(), benchBatch, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(pm.Messages) == 0 {
			b.Fatalf("bare loop starved after %d messages", got)
		}
		got += len(pm.Messages)
		last := pm.Messages[len(pm.Messages)-1].Header.Offset
		if err := c.StoreConsumerOffset(consumer, stream, topic, last, &pm.PartitionId); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.LeaveConsumerGroup(stream, topic, gid); err != nil {
		b.Fatal(err)
	}
}

func transportLoop(b *testing.B, tr *iggy.Transport, group string) {
	ctx := context.Background()
	sub, err := tr.Join(ctx, "t", group)
	if err != nil {
		b.Fatal(err)
	}
	for got := 0; got < benchMessages; {
		recs, err := sub.Poll(ctx, benchBatch)
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) == 0 {
			b.Fatalf("transport starved after %d messages", got)
		}
		got += len(recs)
		last := recs[len(recs)-1]
		if err := sub.Commit(ctx, last.Partition, last.Offset); err != nil {
			b.Fatal(err)
		}
	}
	if err := sub.Leave(ctx); err != nil {
		b.Fatal(err)
	}
}

func benchClient(b *testing.B, s *iggytest.Server) iggcon.Client {
	c, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(s.Addr())))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	if _, err := c.LoginUser("iggy", "iggy"); err != nil {
		b.Fatal(err)
	}
	return c
}

func benchIdent(b *testing.B, name string) iggcon.Identifier {
	id, err := iggcon.NewIdentifier(name)
	if err != nil {
		b.Fatal(err)
	}
	return id
}
