package iggy_test

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// A dropped connection is repaired under a running consumer: it backs off,
// reconnects, rejoins its group and handles everything, losing nothing.
func TestConsumerRidesOverDroppedConnections(t *testing.T) {
	s := iggytest.Start(t)
	tr := dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test")
	ctx := testContext(t)
	if err := tr.EnsureTopics(ctx, 2, "in", "agent.dlq"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	progress := make(chan struct{}, 100)
	c, err := runtime.NewConsumer(tr, runtime.ConsumerConfig{
		Topic: "in", Group: "worker", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			mu.Lock()
			seen[string(c.Message().Body())] = true
			mu.Unlock()
			progress <- struct{}{}
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil, stop) }()
	// The producer retries the transient error of its own dropped connection.
	prod := runtime.NewProducer(tr, runtime.ProducerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			prov := wire.Provenance{Conversation: wire.IDFromUint128(1, uint64(i))}
			headers, _ := prov.Headers()
			if _, err := prod.Publish(ctx, "in", runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: fmt.Appendf(nil, "m%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish(0, 20)
	for range 5 {
		<-progress
	}
	s.DropConnections()
	publish(20, 40)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == 40 {
			break
		}
		select {
		case <-progress:
		case err := <-done:
			t.Fatalf("the consumer stopped on a dropped connection: %v", err)
		case <-ctx.Done():
			t.Fatalf("handled %d of 40", n)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
