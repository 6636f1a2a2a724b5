// Command hello runs two agents on the embedded log: a caller asks a greeter
// for a greeting with request/reply and prints what it got.
//
//	go run ./examples/hello
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
}

// run wires the two agents, sends one name to the caller and waits until the
// caller has printed the greeter's answer.
func run(ctx context.Context, out io.Writer) error {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(embedlog.New("hello", embedlog.Config{}), runtime.ClientConfig{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 2, "caller.inbox"); err != nil {
		return err
	}

	// The greeter answers every command it gets on agent.commands.
	greeter, err := client.NewAgent(runtime.AgentConfig{
		ID:      "greeter",
		Listen:  runtime.TopicCommands,
		Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			name := string(c.Message().Body())
			fmt.Fprintf(out, "greeter: got a request from %s for %q\n", c.Message().Provenance.Agent, name)
			return c.Respond([]byte("hello, " + name))
		}),
	})
	if err != nil {
		return err
	}

	// The caller asks the greeter, within the conversation it was given.
	done := make(chan string, 1)
	caller, err := client.NewAgent(runtime.AgentConfig{
		ID:      "caller",
		Listen:  "caller.inbox",
		Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			reply, err := c.Client().Request(c, runtime.Out{Topic: runtime.TopicCommands, Target: "greeter", Body: c.Message().Body()}, runtime.WithTimeout(5*time.Second))
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "caller: %s answered %q\n", reply.Provenance.Agent, reply.Body())
			done <- string(reply.Body())
			return nil
		}),
	})
	if err != nil {
		return err
	}

	handles := []*runtime.AgentHandle{greeter.Start(ctx), caller.Start(ctx)}
	for _, h := range handles {
		if err := h.Ready(ctx); err != nil {
			return err
		}
	}
	conv := client.IDs().NewID()
	if _, err := client.SendPlain(ctx, "caller.inbox", wire.Provenance{Conversation: conv, Agent: "main"}, []byte("Ada")); err != nil {
		return err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, h := range handles {
		if err := h.Shutdown(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "done: both agents shut down cleanly")
	return nil
}
