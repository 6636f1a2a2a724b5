package humaninput_test

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/internal/examplerig"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Ask publishes a request on agent.human_input and waits for its answer.
// Here an agent on that topic stands in for the person who would answer
// with `laser approvals answer`.
func ExampleAsk() {
	ctx := context.Background()
	rig := examplerig.Start(ctx, examplerig.Agent{ID: "editor", Listen: runtime.TopicHumanInput,
		Handle: func(c *runtime.Ctx) error {
			if c.Message().Kind() != wire.KindCommand {
				return nil // the answers share the topic
			}
			fmt.Printf("asked: %s\n", c.Message().Body())
			return humaninput.Answer(c, c.Client(), "", "editor", c.Message(), false, []byte("ship it"), nil)
		}})
	defer rig.Close()

	decision, err := humaninput.Ask(ctx, rig.Client, humaninput.Request{From: "planner", Prompt: []byte("publish the draft?")})
	fmt.Println(string(decision), err)
	// Output:
	// asked: publish the draft?
	// ship it <nil>
}
