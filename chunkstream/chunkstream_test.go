package chunkstream_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/chunkstream"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// words are what the test agent writes, one Write each.
var words = []string{"alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta"}

// streamed starts an agent that writes words through a chunkstream.Writer
// (8-byte chunks) and ends the stream only when finish, sends it one
// command and returns the log and the stream's channel.
func streamed(t *testing.T, log runtime.Transport, finish bool) wire.ID {
	t.Helper()
	ctx := t.Context()
	client := runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := client.Bootstrap(ctx, 1); err != nil {
		t.Fatal(err)
	}
	channels := make(chan wire.ID, 1)
	agent, err := client.NewAgent(runtime.AgentConfig{
		ID: "writer", Listen: runtime.TopicCommands, Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			cw, err := c.Stream(wire.OperationChat, wire.ContentRaw)
			if err != nil {
				return err
			}
			w, err := chunkstream.NewWriter(cw, chunkstream.WriterConfig{FlushBytes: 8})
			if err != nil {
				return err
			}
			for _, word := range words {
				if _, err := io.WriteString(w, word); err != nil {
					return err
				}
			}
			end := w.Flush
			if finish {
				end = w.Close
			}
			err = end()
			channels <- cw.Channel() // once every chunk is on the log
			return err
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Shutdown(context.WithoutCancel(ctx)) })
	if _, err := client.Send(ctx, runtime.Out{From: "caller", Target: "writer", Body: []byte("go")}); err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-channels:
		return ch
	case <-ctx.Done():
		t.Fatal(ctx.Err())
		return wire.ID{}
	}
}

func collect(t *testing.T, seq func(func([]byte, error) bool)) ([]string, error) {
	t.Helper()
	var got []string
	for b, err := range seq {
		if err != nil {
			return got, err
		}
		got = append(got, string(b))
	}
	return got, nil
}

// TestStreamsFromTheLog writes a stream through the coalescing writer on
// every log, follows it live, rebuilds it after the fact and resumes it
// from its second chunk.
func TestStreamsFromTheLog(t *testing.T) {
	for _, tr := range featuretest.Transports(t, "chunkstream") {
		t.Run(tr.Name, func(t *testing.T) {
			log := tr.New(t)
			ch := streamed(t, log, true)
			live, err := collect(t, chunkstream.Follow(t.Context(), reader(log), runtime.TopicResponses, ch, 0, chunkstream.FollowConfig{}))
			if err != nil {
				t.Fatalf("follow: %v", err)
			}
			if strings.Join(live, "") != strings.Join(words, "") {
				t.Fatalf("followed %q, want %q", live, words)
			}
			if len(live) >= len(words) {
				t.Errorf("%d chunks for %d writes: the writer did not coalesce", len(live), len(words))
			}
			tx, err := chunkstream.Rebuild(t.Context(), reader(log), runtime.TopicResponses, ch)
			if err != nil {
				t.Fatalf("rebuild: %v", err)
			}
			rebuilt := make([]string, len(tx.Chunks))
			for i, c := range tx.Chunks {
				rebuilt[i] = string(c)
			}
			if strings.Join(rebuilt, "|") != strings.Join(live, "|") {
				t.Errorf("rebuilt %q, followed %q", rebuilt, live)
			}
			rest, err := collect(t, chunkstream.Follow(t.Context(), reader(log), runtime.TopicResponses, ch, 1, chunkstream.FollowConfig{}))
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			if strings.Join(rest, "|") != strings.Join(live[1:], "|") {
				t.Errorf("resumed from 1: %q, want %q", rest, live[1:])
			}
		})
	}
}

func TestRebuildReportsAMissingEnd(t *testing.T) {
	log := featuretest.EmbeddedLog(t)
	ch := streamed(t, log, false)
	tx, err := chunkstream.Rebuild(t.Context(), reader(log), runtime.TopicResponses, ch)
	if runtime.CodeOf(err) != runtime.CodeTimeout {
		t.Fatalf("rebuild = %v, want a stream timeout (no terminal chunk)", err)
	}
	if !strings.Contains(err.Error(), "without a terminal chunk") {
		t.Errorf("error %q does not say the end is missing", err)
	}
	if got := len(tx.Chunks); got == 0 {
		t.Error("the chunks before the missing end were not returned")
	}
}

func TestRebuildReportsAGap(t *testing.T) {
	log := featuretest.EmbeddedLog(t)
	ch := streamed(t, log, true)
	holed := &dropSequence{Transport: log, seq: 1}
	tx, err := chunkstream.Rebuild(t.Context(), reader(holed), runtime.TopicResponses, ch)
	var se *runtime.Error
	if !errors.As(err, &se) || se.Sequence != 1 || !strings.HasSuffix(err.Error(), "stream chunk missing") {
		t.Fatalf("rebuild = %v, want a gap (stream chunk missing) at sequence 1", err)
	}
	if len(tx.Chunks) != 1 {
		t.Errorf("got %d chunks before the gap, want 1", len(tx.Chunks))
	}
	// Live, a hole may yet fill; it is reported once the stream is idle.
	cfg := chunkstream.FollowConfig{Idle: 3 * time.Second, Clock: &steppingClock{now: time.Unix(0, 0)}}
	if _, err := collect(t, chunkstream.Follow(t.Context(), reader(holed), runtime.TopicResponses, ch, 0, cfg)); err == nil || !strings.HasSuffix(err.Error(), "stream chunk missing") {
		t.Errorf("follow = %v, want a gap (stream chunk missing)", err)
	}
}

func TestRebuildUnknownChannel(t *testing.T) {
	log := featuretest.EmbeddedLog(t)
	streamed(t, log, true)
	_, err := chunkstream.Rebuild(t.Context(), reader(log), runtime.TopicResponses, wire.ID{1, 2, 3})
	if !errors.Is(err, chunkstream.ErrNoStream) {
		t.Fatalf("rebuild = %v, want ErrNoStream", err)
	}
}

// dropSequence is a log whose reads leave out the chunk at seq, the way a
// truncated or damaged log would.
type dropSequence struct {
	runtime.Transport
	seq uint64
}

func (d *dropSequence) ReadRange(ctx context.Context, topic string, p uint32, off uint64, n int) ([]runtime.Incoming, error) {
	recs, err := d.Transport.ReadRange(ctx, topic, p, off, n)
	kept := recs[:0]
	for _, r := range recs {
		m, derr := runtime.DecodeRecord(topic, &r, ^uint64(0))
		if derr == nil && m.Envelope != nil && m.Envelope.Sequence != nil && *m.Envelope.Sequence == d.seq {
			continue
		}
		kept = append(kept, r)
	}
	return kept, err
}

// steppingClock moves a second each time it is read, and its timers fire at
// once: an idle stream times out after a few polls, without waiting.
type steppingClock struct{ now time.Time }

func (c *steppingClock) Now() time.Time {
	c.now = c.now.Add(time.Second)
	return c.now
}

func (c *steppingClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// reader is a client reading log.
func reader(log runtime.Transport) *runtime.Client {
	return runtime.NewClient(log, runtime.ClientConfig{})
}
