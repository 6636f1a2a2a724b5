package batch_test

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/batch"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
)

// ExampleProducer appends records to a batching producer and waits for
// where each landed; Close publishes what is still queued.
func ExampleProducer() {
	ctx := context.Background()
	client := runtime.NewClient(embedlog.New("shop", embedlog.Config{}), runtime.ClientConfig{})
	_ = client.Transport().EnsureTopics(ctx, 1, "orders")

	b, err := batch.New(ctx, client, "orders", batch.Config{MaxRecords: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	var pending []batch.Pending
	for _, order := range []string{"tea", "scones", "jam"} {
		pending = append(pending, b.Append(ctx, runtime.Outgoing{Key: "table-4", Payload: []byte(order)}))
	}
	if err := b.Close(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range pending {
		pos, err := p.Wait(ctx)
		fmt.Println(pos, err)
	}
	// Output:
	// 0:0 <nil>
	// 0:1 <nil>
	// 0:2 <nil>
}
