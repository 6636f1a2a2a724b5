package iggy_test

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// ExampleDial publishes a record and reads it back as a consumer group
// member, against the in-process test server.
func ExampleDial() {
	srv, err := iggytest.Listen("127.0.0.1:0", iggytest.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	ctx := context.Background()
	tr, err := iggy.Dial(ctx, "iggy://iggy:iggy@"+srv.Addr()+"/app", iggy.Config{})
	if err != nil {
		panic(err)
	}
	defer tr.Close()
	if err := tr.EnsureTopics(ctx, 3, "orders"); err != nil {
		panic(err)
	}
	pos, err := tr.Publish(ctx, "orders", runtime.Outgoing{
		Key:     "customer-42",
		Headers: wire.Headers{{Key: wire.HeaderTarget, Value: wire.StringValue("billing")}},
		Payload: []byte("order #1"),
	})
	if err != nil {
		panic(err)
	}
	sub, err := tr.Join(ctx, "orders", "billing")
	if err != nil {
		panic(err)
	}
	defer sub.Close()
	recs, err := sub.Poll(ctx, 10)
	if err != nil {
		panic(err)
	}
	target, _ := recs[0].Headers.Get(wire.HeaderTarget)
	name, _ := target.AsString()
	fmt.Println(recs[0].Position == pos[0], string(recs[0].Payload), name)
	if err := sub.Commit(ctx, recs[0].Partition, recs[0].Offset); err != nil {
		panic(err)
	}
	// Output: true order #1 billing
}
