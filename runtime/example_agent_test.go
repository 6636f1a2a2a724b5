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

// An agent answers commands on agent.commands; a client asks it and waits
// for the correlated reply.
func ExampleClient_Request() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 2); err != nil {
		panic(err)
	}

	billing, err := client.NewAgent(runtime.AgentConfig{
		ID:      "billing",
		Listen:  runtime.TopicCommands,
		Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			return c.Respond([]byte("charged " + string(c.Message().Body())))
		}),
	})
	if err != nil {
		panic(err)
	}
	h := billing.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		panic(err)
	}
	defer h.Shutdown(ctx)

	reply, err := client.Request(ctx, runtime.Out{From: "shop", Target: "billing", Body: []byte("9.99 EUR")},
		runtime.WithTimeout(5*time.Second))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s from %s\n", reply.Body(), reply.Provenance.Agent)
	// Output: charged 9.99 EUR from billing
}

// A handler that rejects a message parks it in agent.dlq at once; a sink
// hears of every dead letter.
func ExampleDeadLetter() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 1); err != nil {
		panic(err)
	}
	parked := make(chan runtime.DeadLetter, 1)
	agent, err := client.NewAgent(runtime.AgentConfig{
		ID:     "ledger",
		Listen: runtime.TopicCommands,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			return runtime.Reject(fmt.Errorf("amount %q is not a number", c.Message().Body()))
		}),
		Tuning: runtime.Tuning{
			DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) { parked <- dl },
		},
	})
	if err != nil {
		panic(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		panic(err)
	}
	defer h.Shutdown(ctx)

	if _, err := client.Send(ctx, runtime.Out{From: "shop", Target: "ledger", Body: []byte("ten")}); err != nil {
		panic(err)
	}
	dl := <-parked
	fmt.Println(dl.Capsule.Reason, dl.Capsule.Attempts, *dl.Capsule.Detail, runtime.CodeOf(dl.Cause) == runtime.CodeRejected)
	// Output: rejected 1 rejected: amount "ten" is not a number true
}
