package runtime_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// An agent streams its answer as AGDX chunks with a Stream from Ctx.Stream; the caller
// ranges over the pieces as they arrive, in order.
func ExampleClient_Stream() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 1); err != nil {
		panic(err)
	}
	writer, err := client.NewAgent(runtime.AgentConfig{
		ID:      "writer",
		Listen:  runtime.TopicCommands,
		Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			s, err := c.Stream(wire.OperationChat, wire.ContentRaw)
			if err != nil {
				return err
			}
			for _, word := range strings.Fields(string(c.Message().Body())) {
				if err := s.Send([]byte(strings.ToUpper(word))); err != nil {
					return err
				}
			}
			return s.Close()
		}),
	})
	if err != nil {
		panic(err)
	}
	h := writer.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		panic(err)
	}
	defer h.Shutdown(ctx)

	cmd := runtime.Out{From: "caller", Target: "writer", Body: []byte("one piece at a time")}
	for piece, err := range client.Stream(ctx, cmd) {
		if err != nil {
			panic(err)
		}
		fmt.Println(string(piece))
	}
	// Output:
	// ONE
	// PIECE
	// AT
	// A
	// TIME
}
