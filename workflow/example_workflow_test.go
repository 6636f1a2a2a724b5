package workflow_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/lasergo/laser/internal/examplerig"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/workflow"
)

// A workflow runs steps in dependency order, each routed to an agent, and
// journals every completed step so that a rerun of the same RunID skips it.
func ExampleWorkflow_Run() {
	ctx := context.Background()
	rig := examplerig.Start(ctx,
		examplerig.Agent{ID: "writer", Answer: examplerig.Says("draft")},
		examplerig.Agent{ID: "editor", Answer: func(in []byte) []byte { return bytes.ToUpper(in) }},
	)
	defer rig.Close()

	wf := &workflow.Workflow{Name: "planner", RunID: rig.Client.IDs().NewID(), Steps: []workflow.Step{
		{Label: "write", Route: registry.To("writer")},
		{Label: "edit", After: []string{"write"}, Route: registry.To("editor")},
	}}
	out, err := wf.Run(ctx, rig.Client)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %s skipped %v\n", out.Outputs["write"], out.Outputs["edit"], out.Skipped)

	again, err := wf.Run(ctx, rig.Client) // the same RunID: both steps are journaled
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s skipped %v\n", again.Outputs["edit"], again.Skipped)
	// Output:
	// draft DRAFT skipped []
	// DRAFT skipped [write edit]
}
