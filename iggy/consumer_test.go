package iggy_test

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// A dropped connection is repaired under a running consumer: it backs off,
// reconnects, rejoins its group and handles everything, losing nothing.
func TestConsumerRidesOverDroppedConnections(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	tr := dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test", iggy.Config{})
	ctx := t.Context()
	if err := tr.EnsureTopics(ctx, 2, "in", "agent.dlq"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	progress := make(chan struct{}, 100)
	c, err := runtime.NewConsumer(tr, runtime.ConsumerConfig{
		Topic: "in",
		Group: "worker",
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			mu.Lock()
			seen[string(c.Message().Body())] = true
			mu.Unlock()
			progress <- struct{}{}
			return nil
		}),
		Client: runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil, stop) }()
	// The producer retries the transient error of its own dropped connection.
	prod := runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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

// A second replica joining takes partitions from the first; the first must
// carry on with what it keeps (its refused commits are dropped, the new
// owner resumes from the stored offsets) and together they handle all.
func TestConsumerCarriesOnWhenASecondReplicaJoins(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	ctx := t.Context()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var mu sync.Mutex
	seen := map[string]bool{}
	progress := make(chan struct{}, 400)
	start := func() (chan struct{}, chan error) {
		tr := dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test", iggy.Config{})
		if err := tr.EnsureTopics(ctx, 4, "in", "agent.dlq"); err != nil {
			t.Fatal(err)
		}
		c, err := runtime.NewConsumer(tr, runtime.ConsumerConfig{
			Topic: "in",
			Group: "worker",
			Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
				mu.Lock()
				seen[string(c.Message().Body())] = true
				mu.Unlock()
				progress <- struct{}{}
				return nil
			}),
			Client: runtime.NewClient(tr, runtime.ClientConfig{Logger: quiet}),
			Tuning: runtime.Tuning{
				PollBatch: 5,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		stop, done := make(chan struct{}), make(chan error, 1)
		go func() { done <- c.Run(ctx, nil, stop) }()
		return stop, done
	}
	prodTr := dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test", iggy.Config{})
	if err := prodTr.EnsureTopics(ctx, 4, "in", "agent.dlq"); err != nil {
		t.Fatal(err)
	}
	prod := runtime.NewClient(prodTr, runtime.ClientConfig{Logger: quiet})
	for i := range 120 {
		prov := wire.Provenance{Conversation: wire.IDFromUint128(2, uint64(i))}
		headers, _ := prov.Headers()
		if _, err := prod.Publish(ctx, "in", runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: fmt.Appendf(nil, "m%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	stopA, doneA := start()
	for range 10 {
		<-progress
	}
	stopB, doneB := start()
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n == 120 {
			break
		}
		select {
		case <-progress:
		case err := <-doneA:
			t.Fatalf("the first replica stopped when the second joined: %v", err)
		case err := <-doneB:
			t.Fatalf("the second replica stopped: %v", err)
		case <-ctx.Done():
			t.Fatalf("handled %d of 120", n)
		}
	}
	close(stopA)
	close(stopB)
	for _, done := range []chan error{doneA, doneB} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
