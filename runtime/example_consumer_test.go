package runtime_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// A consumer can be used without an agent: it reads a topic as a group
// member and commits each record once it was handled, skipped or parked.
// Closing stop drains in-flight work, commits it and leaves the group.
func ExampleNewConsumer() {
	ctx := context.Background()
	log := embedlog.New("laser", embedlog.Config{})
	if err := runtime.NewClient(log, runtime.ClientConfig{}).Bootstrap(ctx, 2, "orders"); err != nil {
		panic(err)
	}
	done := make(chan struct{})
	c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
		Topic: "orders",
		Group: "packer",
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			fmt.Printf("packing %s\n", c.Message().Body())
			close(done)
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
	})
	if err != nil {
		panic(err)
	}
	stop := make(chan struct{})
	result := make(chan error, 1)
	go func() { result <- c.Run(ctx, nil, stop) }()

	client := runtime.NewClient(log, runtime.ClientConfig{})
	prov := wire.Provenance{Conversation: client.IDs().NewID(), IdempotencyKey: "order-7"}
	pos, err := client.SendPlain(ctx, "orders", prov, []byte("order 7"))
	if err != nil {
		panic(err)
	}
	<-done
	close(stop)
	fmt.Println("stopped:", <-result)
	off, ok, _ := log.StoredOffset(ctx, "orders", "packer", pos.Partition)
	fmt.Println("committed:", ok && off == pos.Offset)
	// Output:
	// packing order 7
	// stopped: <nil>
	// committed: true
}
