package transporttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// RunStream runs the chunk-streaming scenarios over a transport: an agent
// answers a command with a chunk stream and a client reads it back with
// Client.Stream. Scripted responders publish chunks out of order,
// twice or not at all, to check every failure surfaces as its own error.
func RunStream(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(*testing.T, runtime.Transport)
	}{
		{"InOrder", streamInOrder},
		{"ShuffledIsReassembled", streamShuffled},
		{"LostChunkIsAGap", streamLostChunk},
		{"DuplicateSequence", streamDuplicate},
		{"IdenticalDuplicateIsDropped", streamIdenticalDuplicate},
		{"SecondTerminalBelowTheFirst", streamTwoTerminals},
		{"ChunkAfterTerminal", streamAfterTerminal},
		{"ChunkAfterTerminalDecidedByTheLog", streamAfterTerminalDecidedByTheLog},
		{"BurstLargerThanTheBufferForAReaderKeepingUp", streamBurstLargerThanTheBuffer},
		{"SenderTooFarAheadOverflows", streamOverflow},
		{"AbandonedReaderReleasesTheStream", streamAbandoned},
		{"ResponderFailsHalfway", streamResponderFails},
		{"ResponderCrashesMidStream", streamResponderCrashes},
		{"CallerDeadline", streamCallerDeadline},
		{"RequestDeadline", streamRequestDeadline},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, newTransport(t)) })
	}
}

// responder answers one command; resps is the respond topic.
type responder func(c *runtime.Ctx, resps string) error

// streamWorld is an agent answering on its own topics and a client.
type streamWorld struct {
	t      *testing.T
	ctx    context.Context
	client *runtime.Client
	cmds   string
	resps  string
}

// newStreamWorld starts an agent whose handler is h.
func newStreamWorld(t *testing.T, tr runtime.Transport, h responder) *streamWorld {
	t.Helper()
	ctx := t.Context()
	w := &streamWorld{t: t, ctx: ctx, cmds: freshName(t, "cmd"), resps: freshName(t, "resp")}
	dlq := freshName(t, "dlq")
	if err := tr.EnsureTopics(ctx, 1, w.cmds, w.resps, dlq); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w.client = runtime.NewClient(tr, runtime.ClientConfig{Logger: quiet})
	t.Cleanup(func() { _ = w.client.Close() })
	c, err := runtime.NewConsumer(tr, runtime.ConsumerConfig{
		Topic:        w.cmds,
		Group:        freshName(t, "g"),
		Agent:        "writer",
		RespondTopic: w.resps,
		Client:       w.client,
		Handler:      runtime.HandlerFunc(func(c *runtime.Ctx) error { return h(c, w.resps) }),
		Tuning: runtime.Tuning{
			DeadLetterTopic: dlq,
			Retry:           runtime.RetryPolicy{MaxAttempts: 1},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() { done <- c.Run(runCtx, func() { close(ready) }, nil) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("agent stopped before ready: %v", err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// read runs one stream to its end and returns the pieces and the error.
func (w *streamWorld) read(ctx context.Context, opts ...runtime.Option) ([]string, error) {
	opts = append([]runtime.Option{runtime.WithReplyTopic(w.resps)}, opts...)
	var got []string
	for b, err := range w.client.Stream(ctx, runtime.Out{Topic: w.cmds, From: "caller", Body: []byte("go")}, opts...) {
		if err != nil {
			return got, err
		}
		got = append(got, string(b))
	}
	return got, nil
}

// script answers with raw chunks in the given order, each published on
// its own: a number is a data chunk of that sequence with body "c<n>", "T<n>"
// the terminal at n; "=body" after either sets the body.
func script(steps ...string) responder { return scripted(false, steps) }

// scriptBatch is script publishing every chunk in one batch, so that they
// reach the log together and the client's reply reader reads them in one
// pass.
func scriptBatch(steps ...string) responder { return scripted(true, steps) }

func scripted(batch bool, steps []string) responder {
	return func(c *runtime.Ctx, resps string) error {
		env := c.Message().Envelope
		source, _ := wire.ParseAgentID(c.Agent())
		channel := c.Client().IDs().NewID()
		var out []runtime.Outgoing
		for _, s := range steps {
			s, body, hasBody := strings.Cut(s, "=")
			var seq uint64
			last := strings.HasPrefix(s, "T")
			for _, r := range strings.TrimPrefix(s, "T") {
				seq = seq*10 + uint64(r-'0')
			}
			ch := channel
			chunk := &wire.Envelope{Kind: wire.KindChunk, Conversation: env.Conversation, Source: source,
				Correlation: env.Correlation, Channel: &ch, Sequence: &seq, Last: last}
			switch {
			case hasBody:
				chunk.Body = []byte(body)
			case !last:
				chunk.Body = []byte("c" + strings.TrimPrefix(s, "T"))
			}
			if seq == 0 {
				op := wire.OperationChat
				chunk.Operation = &op
			}
			if !batch {
				if _, err := rawsend.Envelope(c, c.Client(), resps, chunk, wire.ContentRaw); err != nil {
					return err
				}
				continue
			}
			payload, err := chunk.Marshal()
			if err != nil {
				return err
			}
			out = append(out, runtime.Outgoing{Key: wire.PartitionKey(chunk.Conversation), Headers: wire.EnvelopeHeaders(chunk, wire.ContentRaw), Payload: payload})
		}
		if len(out) > 0 {
			_, err := c.Client().Publish(c, resps, out...)
			return err
		}
		return nil
	}
}

func expectPieces(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("pieces %q, want %q", got, want)
	}
}

func expectIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
}

// expectFault checks that err is the runtime's *Error of a read stream that
// broke with fault (its cause's text, such as "stream chunk missing").
func expectFault(t *testing.T, err error, fault string) {
	t.Helper()
	e, ok := errors.AsType[*runtime.Error](err)
	if !ok || e.Remote() || e.Err == nil || e.Err.Error() != fault {
		t.Fatalf("error %v, want a stream that broke with %q", err, fault)
	}
}

// expectCode checks that err has code c.
func expectCode(t *testing.T, err error, c runtime.Code) {
	t.Helper()
	if got := runtime.CodeOf(err); got != c {
		t.Fatalf("error %v has code %s, want %s", err, got, c)
	}
}

func streamInOrder(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, func(c *runtime.Ctx, _ string) error {
		s, err := c.Stream(wire.OperationChat, wire.ContentRaw)
		if err != nil {
			return err
		}
		for _, p := range []string{"once", "upon", "a time"} {
			if err := s.Send([]byte(p)); err != nil {
				return err
			}
		}
		return s.Close()
	})
	got, err := w.read(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	expectPieces(t, got, "once", "upon", "a time")
}

// pieces is a responder streaming ps through a Stream, then ending
// with end (nil: Close).
func pieces(end func(*runtime.Stream[[]byte]) error, ps ...string) responder {
	return func(c *runtime.Ctx, _ string) error {
		s, err := c.Stream(wire.OperationChat, wire.ContentRaw)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if err := s.Send([]byte(p)); err != nil {
				return err
			}
		}
		if end == nil {
			return s.Close()
		}
		return end(s)
	}
}

func streamShuffled(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, script("2", "0", "T4", "3", "1"))
	got, err := w.read(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	expectPieces(t, got, "c0", "c1", "c2", "c3")
}

func streamLostChunk(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, script("0", "2", "T3"))
	got, err := w.read(w.ctx, runtime.WithTimeout(300*time.Millisecond))
	expectFault(t, err, "stream chunk missing")
	var se *runtime.Error
	if !errors.As(err, &se) || se.Sequence != 1 {
		t.Fatalf("gap reported as %v, want sequence 1", err)
	}
	expectPieces(t, got, "c0")
}

func streamDuplicate(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, script("0", "1", "1=other", "T2"))
	got, err := w.read(w.ctx)
	expectFault(t, err, "stream chunk duplicated")
	expectPieces(t, got, "c0", "c1")
}

// A producer's retry after an ambiguous publish failure (or a replayed
// signed chunk) repeats a chunk exactly: the stream reads as if it came once.
func streamIdenticalDuplicate(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, script("0", "1", "1", "0", "T2", "T2"))
	got, err := w.read(w.ctx)
	if err != nil {
		t.Fatalf("identical duplicates ended the stream: %v", err)
	}
	expectPieces(t, got, "c0", "c1")
}

// A second terminal below the first does not replace it: the stream ends
// with ErrStreamTwoTerminals instead of cleanly without "tail".
func streamTwoTerminals(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, script("0", "T3=tail", "T2", "1"))
	got, err := w.read(w.ctx)
	expectFault(t, err, "stream has two terminal chunks")
	expectPieces(t, got, "c0")
}

// What lies behind the record that completed the stream is never read,
// however soon it reaches the client: a chunk past the terminal is an error
// when the log has it before the stream completed, and unseen after. Both
// logs are published in one batch, so the reply reader takes each in one
// pass; before, the one behind the terminal was an error or not by timing.
func streamAfterTerminalDecidedByTheLog(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, scriptBatch("0", "T1", "2"))
	got, err := w.read(w.ctx)
	if err != nil {
		t.Fatalf("a chunk behind the completing terminal: %v, want a clean end", err)
	}
	expectPieces(t, got, "c0")
	w = newStreamWorld(t, tr, scriptBatch("0", "2", "T1"))
	got, err = w.read(w.ctx)
	expectFault(t, err, "stream chunk after the terminal")
	expectPieces(t, got, "c0")
}

// A reader that keeps up takes a burst far larger than its buffer: the
// reply reader offers a pass of up to 200 records without yielding, and
// overflow must mean the reader fell behind, not that the burst was big.
func streamBurstLargerThanTheBuffer(t *testing.T, tr runtime.Transport) {
	const n = 300
	steps := make([]string, 0, n+1)
	want := make([]string, 0, n)
	for i := range n {
		steps = append(steps, strconv.Itoa(i))
		want = append(want, "c"+strconv.Itoa(i))
	}
	w := newStreamWorld(t, tr, scriptBatch(append(steps, "T"+strconv.Itoa(n))...))
	got, err := w.read(w.ctx, runtime.WithStreamBuffer(4))
	if err != nil {
		t.Fatalf("a reader keeping up with a burst of %d chunks: %v after %d", n, err, len(got))
	}
	expectPieces(t, got, want...)
}

func streamAfterTerminal(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, script("0", "2", "T1"))
	got, err := w.read(w.ctx)
	expectFault(t, err, "stream chunk after the terminal")
	expectPieces(t, got, "c0")
}

func streamOverflow(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, script("1", "2", "3", "4", "0", "T5"))
	got, err := w.read(w.ctx, runtime.WithStreamBuffer(2))
	expectFault(t, err, "stream reorder buffer full")
	expectPieces(t, got)
}

func streamAbandoned(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, pieces(nil, "first", "second", "third"))
	for b, err := range w.client.Stream(w.ctx, runtime.Out{Topic: w.cmds, From: "caller", Body: []byte("go")}, runtime.WithReplyTopic(w.resps)) {
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != "first" {
			t.Fatalf("first piece %q", b)
		}
		break
	}
	// The abandoned stream left the client in working order.
	got, err := w.read(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	expectPieces(t, got, "first", "second", "third")
}

func streamResponderFails(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, pieces(func(s *runtime.Stream[[]byte]) error {
		return s.Fail(wire.ErrorInternal, "model went away", true)
	}, "half", "way"))
	got, err := w.read(w.ctx)
	var re *runtime.Error
	if !(errors.As(err, &re) && re.Remote()) || re.Msg != "model went away" || !re.Retryable {
		t.Fatalf("error %v, want the responder's RemoteError", err)
	}
	expectPieces(t, got, "half", "way")
}

func streamResponderCrashes(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, pieces(func(*runtime.Stream[[]byte]) error {
		return runtime.Reject(fmt.Errorf("crashed"))
	}, "half"))
	got, err := w.read(w.ctx, runtime.WithTimeout(300*time.Millisecond))
	expectFault(t, err, "stream ended without a terminal chunk")
	expectCode(t, err, runtime.CodeTimeout)
	expectPieces(t, got, "half")
}

// stalling streams one piece, then waits until the test ends.
func stalling(t *testing.T) responder {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func(c *runtime.Ctx, _ string) error {
		s, err := c.Stream(wire.OperationChat, wire.ContentRaw)
		if err != nil {
			return err
		}
		if err := s.Send([]byte("slow")); err != nil {
			return err
		}
		select {
		case <-release:
		case <-c.Done():
		}
		return s.Close()
	}
}

func streamCallerDeadline(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, stalling(t))
	ctx, cancel := context.WithTimeout(w.ctx, 500*time.Millisecond)
	defer cancel()
	got, err := w.read(ctx)
	expectIs(t, err, context.DeadlineExceeded)
	expectPieces(t, got, "slow")
}

// The request's deadline bounds the whole stream, however recently the
// last chunk came.
func streamRequestDeadline(t *testing.T, tr runtime.Transport) {
	w := newStreamWorld(t, tr, stalling(t))
	got, err := w.read(w.ctx, runtime.WithDeadline(time.Now().Add(500*time.Millisecond)), runtime.WithTimeout(time.Minute))
	expectFault(t, err, "stream ended without a terminal chunk")
	expectPieces(t, got, "slow")
}
