package runtime_test

import (
	"context"
	"errors"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// streamer is a handler streaming each of pieces as one chunk, then Close.
func streamer(pieces ...string) runtime.Handler {
	return handlerFunc(func(ctx *runtime.Ctx) error {
		s, err := ctx.Stream(wire.OperationChat, wire.ContentRaw)
		if err != nil {
			return err
		}
		for _, p := range pieces {
			if err := s.Send([]byte(p)); err != nil {
				return err
			}
		}
		return s.Close()
	})
}

// readStream reads a whole stream.
func readStream(seq func(func([]byte, error) bool)) ([]string, error) {
	var got []string
	for b, err := range seq {
		if err != nil {
			return got, err
		}
		got = append(got, string(b))
	}
	return got, nil
}

func TestStreamChunksFollowTheAGDXRules(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	runAgent(t, c, runtime.AgentConfig{ID: "writer", Respond: runtime.TopicResponses, Handler: streamer("a", "b")})
	deadline := time.Now().Add(time.Minute).Truncate(time.Microsecond)
	got, err := readStream(c.Stream(context.Background(), runtime.Out{From: "caller", Body: []byte("go")}, runtime.WithDeadline(deadline)))
	if err != nil || len(got) != 2 {
		t.Fatalf("got %q, %v", got, err)
	}
	var chunks []*wire.Envelope
	for p := range uint32(4) {
		recs, err := log.ReadRange(context.Background(), runtime.TopicResponses, p, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			env, err := wire.DecodeEnvelope(r.Payload)
			if err == nil && env.Kind == wire.KindChunk {
				chunks = append(chunks, env)
			}
		}
	}
	if len(chunks) != 3 {
		t.Fatalf("%d chunks on the respond topic, want 3", len(chunks))
	}
	for i, ch := range chunks {
		if *ch.Sequence != uint64(i) || ch.Record != nil || ch.Correlation == nil || *ch.Channel != *chunks[0].Channel {
			t.Fatalf("chunk %d: sequence %v record %v correlation %v channel %v", i, *ch.Sequence, ch.Record, ch.Correlation, ch.Channel)
		}
	}
	open, terminal := chunks[0], chunks[2]
	if open.Operation == nil || *open.Operation != wire.OperationChat || open.DeadlineMicros == nil || *open.DeadlineMicros != uint64(deadline.UnixMicro()) {
		t.Fatalf("opening chunk operation %v deadline %v", open.Operation, open.DeadlineMicros)
	}
	if chunks[1].Operation != nil || chunks[1].DeadlineMicros != nil {
		t.Fatal("a data chunk carries the opening chunk's fields")
	}
	if !terminal.Last || terminal.FinishReason == nil || *terminal.FinishReason != runtime.FinishStop || len(terminal.Body) != 0 {
		t.Fatalf("terminal chunk %+v", terminal)
	}
}

func TestStreamSignedChunksCountOnlyThroughTheVerifier(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	key := newKey(7)
	reg := sign.NewRegistry()
	if err := reg.Enroll("writer", key.Public()); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, log, clock.System{}, reg)
	runAgent(t, c, runtime.AgentConfig{ID: "writer", Respond: runtime.TopicResponses,
		SigningKey: key, Handler: streamer("signed", "tokens")})
	got, err := readStream(c.Stream(context.Background(), runtime.Out{From: "caller", Target: "writer", Body: []byte("go")}))
	if err != nil || len(got) != 2 || got[0] != "signed" {
		t.Fatalf("signed stream: %q, %v", got, err)
	}

	// The same stream unsigned is ignored by a verifying client: it never
	// sees a chunk, so the stream times out.
	runAgent(t, c, runtime.AgentConfig{ID: "impostor", Respond: runtime.TopicResponses, Handler: streamer("forged")})
	got, err = readStream(c.Stream(context.Background(), runtime.Out{From: "caller", Target: "impostor", Body: []byte("go")},
		runtime.WithTimeout(200*time.Millisecond)))
	if streamFault(err) != "stream ended without a terminal chunk" || runtime.CodeOf(err) != runtime.CodeTimeout || len(got) != 0 {
		t.Fatalf("unsigned stream through a verifier: %q, %v", got, err)
	}
}

type token struct {
	Text string `json:"text"`
}

func TestStreamTypedItemsRoundTrip(t *testing.T) {
	c := newClient(t, embedlog.New("laser", embedlog.Config{}), clock.System{}, nil)
	runAgent(t, c, runtime.AgentConfig{ID: "writer", Respond: runtime.TopicResponses, Handler: handlerFunc(func(ctx *runtime.Ctx) error {
		s, err := runtime.OpenTypedStream[token](ctx, wire.ContentJSON)
		if err != nil {
			return err
		}
		for _, p := range []string{"x", "y"} {
			if err := s.Send(token{Text: p}); err != nil {
				return err
			}
		}
		return s.Close()
	})})
	var got []string
	for tok, err := range runtime.CallStream[token](context.Background(), c, runtime.Out{From: "caller"}, "go", wire.ContentJSON, "go") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tok.Text)
	}
	if len(got) != 2 || got[0] != "x" || got[1] != "y" {
		t.Fatalf("typed items %q", got)
	}
}

// A reader that stops reading must not hold up the client's reply reader:
// the stream overflows its own bounded buffer while a request on the same
// reply topic, answered after all the chunks, still completes.
func TestStreamSlowReaderDoesNotBlockOtherCallers(t *testing.T) {
	c := newClient(t, embedlog.New("laser", embedlog.Config{}), clock.System{}, nil)
	const n = 50
	var many []string
	for range n {
		many = append(many, "tok")
	}
	stream := streamer(many...)
	runAgent(t, c, runtime.AgentConfig{ID: "writer", Respond: runtime.TopicResponses, Handler: handlerFunc(func(ctx *runtime.Ctx) error {
		if string(ctx.Message().Body()) == "ping" {
			return ctx.Respond([]byte("pong"))
		}
		return stream.Handle(ctx)
	})})
	conv := c.IDs().NewID()
	first := true
	var err error
	for _, err = range c.Stream(context.Background(), runtime.Out{From: "caller", Body: []byte("go")},
		runtime.WithStreamBuffer(2), runtime.WithConversation(conv)) {
		if err != nil || !first {
			break
		}
		first = false
		// Same conversation, so same partition: the pong lands behind every chunk.
		m, rerr := c.Request(context.Background(), runtime.Out{From: "caller", Body: []byte("ping")}, runtime.WithConversation(conv))
		if rerr != nil || string(m.Body()) != "pong" {
			t.Fatalf("request behind a stalled stream: %v", rerr)
		}
	}
	if streamFault(err) != "stream reorder buffer full" {
		t.Fatalf("stalled stream ended with %v, want ErrStreamOverflow", err)
	}
}

func TestStreamAbandonedLeavesNoGoroutine(t *testing.T) {
	c := newClient(t, embedlog.New("laser", embedlog.Config{}), clock.System{}, nil)
	runAgent(t, c, runtime.AgentConfig{ID: "writer", Respond: runtime.TopicResponses, Handler: streamer("one", "two", "three")})
	// One stream read to its end first, so the agent's poller and committer
	// run before the count is taken (Ready may come before they start).
	for _, err := range c.Stream(context.Background(), runtime.Out{From: "caller", Body: []byte("go")}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	before := goruntime.NumGoroutine()
	for range 3 {
		for _, err := range c.Stream(context.Background(), runtime.Out{From: "caller", Body: []byte("go")}) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	transporttest.Eventually(t, waitLimit, "the goroutine count back to its level before the streams", func() bool {
		return goruntime.NumGoroutine() <= before
	})
}

// A handler that fails after streaming part of its answer is not run again
// (a rerun would stream the answer a second time, on a channel the caller
// no longer reads): its request is dead-lettered at once, even for an error
// that would otherwise be retried.
func TestStreamHandlerFailingAfterItStreamedIsNotRetried(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	var runs atomic.Int32
	runAgent(t, c, runtime.AgentConfig{ID: "writer", Respond: runtime.TopicResponses, Handler: handlerFunc(func(ctx *runtime.Ctx) error {
		runs.Add(1)
		s, err := ctx.Stream(wire.OperationChat, wire.ContentRaw)
		if err != nil {
			return err
		}
		if err := s.Send([]byte("one")); err != nil {
			return err
		}
		return errors.New("the model went away") // retryable on its own
	})})
	got, err := readStream(c.Stream(context.Background(), runtime.Out{From: "caller", Body: []byte("go")}, runtime.WithTimeout(300*time.Millisecond)))
	if err == nil || len(got) != 1 || got[0] != "one" {
		t.Fatalf("stream read %q, %v; want the one piece, then an error", got, err)
	}
	transporttest.Eventually(t, waitLimit, "the request dead-lettered", func() bool {
		var n uint64
		for p := uint32(0); p < 4; p++ {
			next, _ := log.NextOffset(context.Background(), runtime.TopicDLQ, p)
			n += next
		}
		return n == 1
	})
	if n := runs.Load(); n != 1 {
		t.Fatalf("the handler ran %d times, want once", n)
	}
}

// streamFault is the fault a read stream broke with (the cause of its
// *runtime.Error, such as "stream chunk missing"); empty for any other error.
func streamFault(err error) string {
	e, ok := errors.AsType[*runtime.Error](err)
	if !ok || e.Remote() || e.Err == nil {
		return ""
	}
	return e.Err.Error()
}
