package runtime_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
)

// A contract is a command to one agent with delivery terms: with an expiry,
// a target that acknowledges pickup (AckOnPickup) is told apart from one
// that never took the command.
func ExampleClient_SendContract() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 1); err != nil {
		panic(err)
	}
	crediter, err := client.NewAgent(runtime.AgentConfig{
		ID:      "crediter",
		Listen:  runtime.TopicCommands,
		Respond: runtime.TopicResponses,
		Tuning:  runtime.Tuning{AckOnPickup: true},
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			return c.Respond([]byte("credited"))
		}),
	})
	if err != nil {
		panic(err)
	}
	h := crediter.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		panic(err)
	}
	defer h.Shutdown(ctx)

	res, err := client.SendContract(ctx, runtime.Contract{
		Out:      runtime.Out{From: "bank", Target: "crediter", Body: []byte("credit 5")},
		Expiry:   5 * time.Second,
		Deadline: 10 * time.Second,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Err(), res.Consumed, string(res.Reply.Body()))
	// Output: <nil> true credited
}
