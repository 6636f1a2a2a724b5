// Command stream runs a writer agent that answers a prompt piece by piece as
// an AGDX chunk stream, and a caller that prints each piece as it arrives.
// The second prompt makes the writer fail halfway: the caller prints the
// pieces it got, then the writer's error.
//
//	go run ./examples/stream
//	LASER_IGGY_ADDR=iggy://iggy:iggy@127.0.0.1:8090/stream go run ./examples/stream
//
// Without LASER_IGGY_ADDR it runs on the embedded log.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/memlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func main() {
	log.SetOutput(io.Discard) // the Iggy SDK logs every login
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var tr runtime.Transport = memlog.New("stream")
	if addr := os.Getenv("LASER_IGGY_ADDR"); addr != "" {
		t, err := iggy.Dial(ctx, addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "stream:", err)
			os.Exit(1)
		}
		defer t.Close()
		tr = t
	}
	if err := run(ctx, tr, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stream:", err)
		os.Exit(1)
	}
}

// story is what the writer streams, one word per chunk.
const story = "once upon a time a log kept every word"

// write is the writer's handler: it streams the story word by word, and
// fails after three words when the prompt asks it to.
func write(c *runtime.Ctx) error {
	s, err := c.OpenStream(wire.OperationChat, wire.ContentRaw)
	if err != nil {
		return err
	}
	for i, word := range strings.Fields(story) {
		if i == 3 && string(c.Message().Body()) == "fail halfway" {
			return s.Fail(wire.ErrorInternal, "the model went away", true)
		}
		if err := s.Send([]byte(word)); err != nil {
			return err
		}
	}
	return s.Close()
}

// run starts the writer, streams two answers and prints them.
func run(ctx context.Context, tr runtime.Transport, out io.Writer) error {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(tr, runtime.ClientOptions{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 1); err != nil {
		return err
	}
	writer, err := client.NewAgent(runtime.AgentConfig{
		ID: "writer", Listen: runtime.TopicCommands, Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(write),
	})
	if err != nil {
		return err
	}
	h := writer.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		return err
	}
	for _, prompt := range []string{"tell a story", "fail halfway"} {
		fmt.Fprintf(out, "caller: %q\n", prompt)
		cmd := runtime.Command{From: "caller", Target: "writer", Body: []byte(prompt)}
		for piece, err := range client.RequestStream(ctx, cmd, runtime.WithTimeout(5*time.Second)) {
			var remote *runtime.RemoteError
			switch {
			case errors.As(err, &remote):
				fmt.Fprintf(out, "\n  writer failed: %s\n", remote.Message)
			case err != nil:
				return err
			default:
				fmt.Fprintf(out, "  %s", piece)
			}
		}
		fmt.Fprintln(out)
	}
	return h.Shutdown(ctx)
}
