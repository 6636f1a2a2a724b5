package chunkstream_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/lasergo/laser/chunkstream"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// An agent streams tokens through a coalescing Writer; afterwards anyone
// rebuilds the stream from the log as a transcript, or resumes it from the
// chunk after the last one they saw.
func ExampleRebuild() {
	ctx := context.Background()
	log := embedlog.New("laser", embedlog.Config{})
	client := runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_ = client.Bootstrap(ctx, 1)
	done := make(chan wire.ID, 1)
	agent, _ := client.NewAgent(runtime.AgentConfig{
		ID: "writer", Listen: runtime.TopicCommands, Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			cw, err := c.Stream(wire.OperationChat, wire.ContentRaw)
			if err != nil {
				return err
			}
			w, _ := chunkstream.NewWriter(cw, chunkstream.WriterConfig{FlushBytes: 10})
			for _, token := range []string{"The ", "log ", "keeps ", "every ", "token."} {
				_, _ = io.WriteString(w, token)
			}
			err = w.Close()
			done <- cw.Channel()
			return err
		}),
	})
	h := agent.Start(ctx)
	_ = h.Ready(ctx)
	defer h.Shutdown(ctx)
	_, _ = client.Send(ctx, runtime.Out{From: "caller", Target: "writer", Body: []byte("go")})
	channel := <-done

	tx, err := chunkstream.Rebuild(ctx, client, runtime.TopicResponses, channel)
	fmt.Printf("transcript %q %v\n", tx.Chunks, err)
	for chunk, err := range chunkstream.Follow(ctx, client, runtime.TopicResponses, channel, 1, chunkstream.FollowConfig{}) {
		fmt.Printf("resumed %q %v\n", chunk, err)
	}
	// Output:
	// transcript ["The log keeps " "every token."] <nil>
	// resumed "every token." <nil>
}
