package chunkstream_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/lasergo/laser/chunkstream"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// BenchmarkRebuild10k rebuilds a finished 10,000-chunk stream (32-byte
// chunks, the stream alone on its topic) from the embedded log.
func BenchmarkRebuild10k(b *testing.B) {
	const chunks = 10_000
	ctx := b.Context()
	log := embedlog.New("bench", embedlog.Config{})
	client := runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := client.Bootstrap(ctx, 1); err != nil {
		b.Fatal(err)
	}
	channels := make(chan wire.ID, 1)
	agent, err := client.NewAgent(runtime.AgentConfig{
		ID: "writer", Listen: runtime.TopicCommands, Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			cw, err := c.Stream(wire.OperationChat, wire.ContentRaw)
			if err != nil {
				return err
			}
			for i := range chunks {
				if err := cw.Send(fmt.Appendf(nil, "token %025d", i)); err != nil {
					return err
				}
			}
			err = cw.Close()
			channels <- cw.Channel()
			return err
		}),
	})
	if err != nil {
		b.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		b.Fatal(err)
	}
	defer h.Shutdown(context.WithoutCancel(ctx))
	if _, err := client.Send(ctx, runtime.Out{From: "caller", Target: "writer", Body: []byte("go")}); err != nil {
		b.Fatal(err)
	}
	ch := <-channels
	b.ReportAllocs()
	for b.Loop() {
		tx, err := chunkstream.Rebuild(ctx, client, runtime.TopicResponses, ch)
		if err != nil {
			b.Fatal(err)
		}
		if len(tx.Chunks) != chunks {
			b.Fatalf("rebuilt %d chunks, want %d", len(tx.Chunks), chunks)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/chunks, "ns/chunk")
}
