package transporttest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// BenchStream measures chunk streaming over tr: each iteration requests one
// stream of chunks pieces of size bytes from an agent and reads it to the
// end. It reports chunks/s and the mean time from publishing the request to
// the first piece (ttfc-µs). Agent and reply reader poll every millisecond,
// so the time to first chunk is not the default 10 ms poll wait.
func BenchStream(b *testing.B, tr runtime.Transport, chunks, size int) {
	ctx := context.Background()
	cmds, resps, dlq := freshName(b, "cmd"), freshName(b, "resp"), freshName(b, "dlq")
	if err := tr.EnsureTopics(ctx, 1, cmds, resps, dlq); err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: quiet, ReplyPollInterval: time.Millisecond})
	defer client.Close()
	piece := make([]byte, size)
	c, err := runtime.NewConsumer(tr, runtime.ConsumerConfig{
		Topic:        cmds,
		Group:        freshName(b, "g"),
		Agent:        "writer",
		RespondTopic: resps,
		Client:       client,
		Handler: runtime.HandlerFunc(func(ctx *runtime.Ctx) error {
			s, err := ctx.Stream(wire.OperationChat, wire.ContentRaw)
			if err != nil {
				return err
			}
			for range chunks {
				if err := s.Send(piece); err != nil {
					return err
				}
			}
			return s.Close()
		}),
		Tuning: runtime.Tuning{
			DeadLetterTopic: dlq,
			PollInterval:    time.Millisecond,
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done, ready := make(chan error, 1), make(chan struct{})
	go func() { done <- c.Run(runCtx, func() { close(ready) }, nil) }()
	<-ready
	defer func() { cancel(); <-done }()

	cmd := runtime.Out{Topic: cmds, From: "caller", Body: []byte("go")}
	var first time.Duration
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		t0, n := time.Now(), 0
		for _, err := range client.Stream(ctx, cmd, runtime.WithReplyTopic(resps)) {
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				first += time.Since(t0)
			}
			n++
		}
		if n != chunks {
			b.Fatalf("%d pieces, want %d", n, chunks)
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N*chunks)/elapsed.Seconds(), "chunks/s")
	b.ReportMetric(float64(first.Microseconds())/float64(b.N), "ttfc-µs")
}
