package iggy_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// A hard stop does not cut off the poll the consumer has in flight: on Iggy
// that would abandon the connection, and with it the group membership,
// while a handler that ignores its cancellation still runs, so another
// member could take the partition and handle the same record at once.
func TestAHardStopWithAPollInFlightKeepsTheMembershipWhileAHandlerRuns(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	addr := "iggy://iggy:iggy@" + s.Addr() + "/laser_test"
	tr := dialTransport(t, addr, iggy.Config{})
	ctx := t.Context()
	if err := tr.EnsureTopics(ctx, 1, "in", runtime.TopicDLQ); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	prov := wire.Provenance{Conversation: wire.IDFromUint128(1, 1)}
	headers, err := prov.Headers()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Publish(ctx, "in", runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: []byte("slow")}); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	first, err := runtime.NewConsumer(tr, runtime.ConsumerConfig{
		Topic: "in",
		Group: "worker",
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error {
			close(started)
			<-release // deaf to its cancellation
			return nil
		}),
		Client: runtime.NewClient(tr, runtime.ClientConfig{Logger: quiet}),
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, hardStop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- first.Run(runCtx, nil, nil) }()
	<-started
	s.Hang(iggytest.CmdPoll)
	if err := s.WaitHeld(ctx, 1); err != nil { // the poll read ahead is in flight
		t.Fatal(err)
	}
	hardStop()
	<-done
	s.Unhang()

	second := make(chan string, 4)
	replacement, err := runtime.NewConsumer(dialTransport(t, addr, iggy.Config{}), runtime.ConsumerConfig{
		Topic: "in",
		Group: "worker",
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			second <- string(c.Message().Body())
			return nil
		}),
		Client: runtime.NewClient(dialTransport(t, addr, iggy.Config{}), runtime.ClientConfig{Logger: quiet}),
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done2 := make(chan error, 1)
	go func() { done2 <- replacement.Run(ctx, nil, stop) }()
	select {
	case b := <-second:
		t.Fatalf("the replacement handled %q while the first member's handler still ran", b)
	case <-time.After(500 * time.Millisecond):
	}
	close(release)
	close(stop)
	if err := <-done2; err != nil {
		t.Fatalf("replacement Run = %v", err)
	}
}
