package fanout_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/lasergo/laser/fanout"
	"github.com/lasergo/laser/internal/examplerig"
	"github.com/lasergo/laser/registry"
)

// Send asks every agent capable of a skill and gathers the replies by a
// policy; RequireAll waits for every one.
func ExampleSend() {
	ctx := context.Background()
	rig := examplerig.Start(ctx,
		examplerig.Agent{ID: "rev-ana", Skills: []string{"review"}, Answer: examplerig.Says("lgtm")},
		examplerig.Agent{ID: "rev-bo", Skills: []string{"review"}, Answer: examplerig.Says("needs a test")},
	)
	defer rig.Close()
	reg := registry.New(rig.Client.Transport(), registry.Config{})
	if err := reg.Refresh(ctx); err != nil {
		fmt.Println(err)
		return
	}

	g, err := fanout.Send(ctx, rig.Client, reg, fanout.Request{Skill: "review", From: "planner", Body: []byte("draft v1")}, fanout.RequireAll())
	if err != nil {
		fmt.Println(err)
		return
	}
	var replies []string
	for _, r := range g.OK {
		replies = append(replies, r.Agent+": "+string(r.Message.Body()))
	}
	slices.Sort(replies) // branches answer in any order
	fmt.Println(replies, len(g.Failures), len(g.Cancelled))
	// Output:
	// [rev-ana: lgtm rev-bo: needs a test] 0 0
}
