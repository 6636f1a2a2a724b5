package embedlog_test

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
)

// The embedded log needs no setup: create topics, publish, join a group,
// poll and commit what was handled.
func Example() {
	ctx := context.Background()
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(ctx, 2, "agent.commands"); err != nil {
		fmt.Println(err)
		return
	}
	pos, err := log.Publish(ctx, "agent.commands",
		runtime.Outgoing{Key: "conversation-1", Payload: []byte("hello")},
		runtime.Outgoing{Key: "conversation-1", Payload: []byte("again")},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("published at", pos)

	sub, err := log.Join(ctx, "agent.commands", "worker")
	if err != nil {
		fmt.Println(err)
		return
	}
	recs, err := sub.Poll(ctx, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range recs {
		fmt.Printf("%v %s\n", r.Position, r.Payload)
		if err := sub.Commit(ctx, r.Partition, r.Offset); err != nil {
			fmt.Println(err)
			return
		}
	}
	off, ok, _ := log.StoredOffset(ctx, "agent.commands", "worker", recs[0].Partition)
	fmt.Println("committed", off, ok)
	// Output:
	// published at [1:0 1:1]
	// 1:0 hello
	// 1:1 again
	// committed 1 true
}
