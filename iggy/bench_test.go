package iggy_test

// The lead adds the full-consumer benchmark (the runtime's reliable consumer
// over this transport, next to the bare SDK loop below) once the runtime
// consumer exists.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
)

const (
	benchMessages = 50_000
	benchBatch    = 500
	benchPayload  = 256
)

// BenchmarkPollAndStore reads the same pre-published messages from the
// test server twice per iteration, each time as a fresh consumer group: once
// with a bare SDK loop (group poll with "next", then store the last offset)
// and once through the transport (Subscription.Poll, then Commit). It
// reports both rates and transport/sdk, the share of the bare loop's
// throughput the transport keeps.
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
	payload := make([]byte, benchPayload)
	for sent := 0; sent < benchMessages; sent += benchBatch {
		msgs := make([]iggcon.IggyMessage, benchBatch)
		for i := range msgs {
			if msgs[i], err = iggcon.NewIggyMessage(payload); err != nil {
				b.Fatal(err)
			}
		}
		if err := c.SendMessages(stream, topic, iggcon.PartitionId(0), msgs); err != nil {
			b.Fatal(err)
		}
	}

	var sdkTime, trTime time.Duration
	round := 0
	for b.Loop() {
		round++
		start := time.Now()
		sdkLoop(b, c, stream, topic, fmt.Sprintf("sdk-%d", round))
		mid := time.Now()
		transportLoop(b, tr, fmt.Sprintf("tr-%d", round))
		sdkTime += mid.Sub(start)
		trTime += time.Since(mid)
	}
	sdkRate := float64(benchMessages*round) / sdkTime.Seconds()
	trRate := float64(benchMessages*round) / trTime.Seconds()
	b.ReportMetric(sdkRate, "sdk-msgs/s")
	b.ReportMetric(trRate, "transport-msgs/s")
	b.ReportMetric(trRate/sdkRate, "transport/sdk")
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
