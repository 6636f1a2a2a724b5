// Command stream runs a writer agent that answers a prompt piece by piece as
// an AGDX chunk stream, and a caller that prints each piece as it arrives.
// The writer is a generated agent (writer.go, laser_gen.go): its method
// sends tokens to a *runtime.Stream[Token] and the generated client's Draft
// returns an iter.Seq2[Token, error]. The second prompt makes the writer
// fail halfway: the caller prints the pieces it got, then the writer's
// error.
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
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
)

func main() {
	log.SetOutput(io.Discard) // the Iggy SDK logs every login
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var tr runtime.Transport = embedlog.New("stream", embedlog.Config{})
	if addr := os.Getenv("LASER_IGGY_ADDR"); addr != "" {
		t, err := iggy.Dial(ctx, addr, iggy.Config{})
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

// run starts the writer, streams two answers and prints them.
func run(ctx context.Context, tr runtime.Transport, out io.Writer) error {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 1); err != nil {
		return err
	}
	writer, err := NewWriterAgent(client, &Writer{})
	if err != nil {
		return err
	}
	h := writer.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		return err
	}
	writers := NewWriterClient(client, "caller")
	for _, prompt := range []Prompt{{Topic: "a log"}, {Topic: "a log", FailAfter: 3}} {
		fmt.Fprintf(out, "caller: a story about %s", prompt.Topic)
		if prompt.FailAfter > 0 {
			fmt.Fprintf(out, ", failing after %d words", prompt.FailAfter)
		}
		fmt.Fprintln(out)
		for tok, err := range writers.Draft(ctx, prompt, runtime.WithTimeout(5*time.Second)) {
			var remote *runtime.Error
			switch {
			case errors.As(err, &remote) && remote.Remote():
				fmt.Fprintf(out, "\n  writer failed: %s", remote.Msg)
			case err != nil:
				return err
			default:
				fmt.Fprintf(out, "  %s", tok.Text)
			}
		}
		fmt.Fprintln(out)
	}
	return h.Shutdown(ctx)
}
