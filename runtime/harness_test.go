package runtime_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/internal/vectors"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The harness below drives a consumer over the embedded log. Tests wait on
// channels fed by handlers, sinks and the transport, never on sleeps; the
// only timeouts are safety nets that fail a hung test.

const (
	topic  = "agent.commands"
	dlq    = "agent.dlq"
	resp   = "agent.responses"
	agent  = "worker"
	sender = "planner"
)

// waitLimit bounds every wait so a broken test fails instead of hanging.
const waitLimit = 10 * time.Second

var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newLog returns an embedded log with the agent topics created: embedlog's
// engine, whose groups a test can inspect.
func newLog(t *testing.T, partitions uint32, clock clock.Clock) *logstore.Log {
	t.Helper()
	l := logstore.New("laser", logstore.WithClock(clock), logstore.WithStreamID(7))
	if err := l.EnsureTopics(context.Background(), partitions, topic, dlq, resp); err != nil {
		t.Fatal(err)
	}
	return l
}

// seqIDs mints predictable ids: 1, 2, 3, ...
type seqIDs struct {
	mu sync.Mutex
	n  uint64
}

func (s *seqIDs) NewID() wire.ID {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return wire.IDFromUint128(0xfeed, s.n)
}

// running is a consumer started by start.
type running struct {
	c      *runtime.Consumer
	stop   chan struct{}
	cancel context.CancelFunc
	done   chan error
}

// start runs a consumer and waits until it is ready.
func start(t *testing.T, tr runtime.Transport, cfg runtime.ConsumerConfig) *running {
	t.Helper()
	if cfg.Topic == "" {
		cfg.Topic = topic
	}
	if cfg.Group == "" {
		cfg.Group = agent
	}
	if cfg.Client == nil {
		cfg.Client = runtime.NewClient(tr, runtime.ClientConfig{Logger: quietLogger()})
	}
	c, err := runtime.NewConsumer(tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{c: c, stop: make(chan struct{}), cancel: cancel, done: make(chan error, 1)}
	ready := make(chan struct{})
	go func() { r.done <- c.Run(ctx, func() { close(ready) }, r.stop) }()
	select {
	case <-ready:
	case err := <-r.done:
		t.Fatalf("consumer stopped before it was ready: %v", err)
	case <-time.After(waitLimit):
		t.Fatal("consumer not ready")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(waitLimit):
		}
	})
	return r
}

// shutdown stops gracefully and returns Run's result.
func (r *running) shutdown(t *testing.T) error {
	t.Helper()
	close(r.stop)
	return r.wait(t)
}

// wait returns Run's result once it ends.
func (r *running) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(waitLimit):
		t.Fatal("consumer did not stop")
		return nil
	}
}

// recv waits for one value from ch.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// deadLetters is a sink that forwards every dead letter to a channel.
func deadLetters() (func(context.Context, runtime.DeadLetter), chan runtime.DeadLetter) {
	ch := make(chan runtime.DeadLetter, 64)
	return func(_ context.Context, dl runtime.DeadLetter) { ch <- dl }, ch
}

// plain publishes a plain provenance message and returns its position.
func plain(t *testing.T, tr runtime.Transport, prov wire.Provenance, payload string) runtime.Position {
	t.Helper()
	headers, err := prov.Headers()
	if err != nil {
		t.Fatal(err)
	}
	pos, err := tr.Publish(context.Background(), topic, runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: []byte(payload)})
	if err != nil {
		t.Fatal(err)
	}
	return pos[0]
}

// raw publishes a record with the given headers, keyed by key.
func raw(t *testing.T, tr runtime.Transport, key string, headers wire.Headers, payload []byte) runtime.Position {
	t.Helper()
	pos, err := tr.Publish(context.Background(), topic, runtime.Outgoing{Key: key, Headers: headers, Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	return pos[0]
}

// envelope publishes an AGDX envelope with the standard headers.
func envelope(t *testing.T, tr runtime.Transport, env *wire.Envelope, ct wire.ContentType) runtime.Position {
	t.Helper()
	payload, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return raw(t, tr, wire.PartitionKey(env.Conversation), wire.EnvelopeHeaders(env, ct), payload)
}

var convN uint64

// conv returns a fresh conversation id for a test message.
func conv() wire.ID {
	convN++
	return wire.IDFromUint128(0xc0, convN)
}

// command builds a valid AGDX command from sender.
func command(body string) *wire.Envelope {
	rec, corr := wire.IDFromUint128(0x5ec, convN+1000), wire.IDFromUint128(0xc022, convN+1000)
	return &wire.Envelope{
		Kind:         wire.KindCommand,
		Record:       &rec,
		Conversation: conv(),
		Source:       sender,
		Correlation:  &corr,
		Body:         []byte(body),
	}
}

// stored returns the group's committed offset of a partition.
func stored(t *testing.T, tr runtime.Transport, partition uint32) (uint64, bool) {
	t.Helper()
	off, ok, err := tr.StoredOffset(context.Background(), topic, agent, partition)
	if err != nil {
		t.Fatal(err)
	}
	return off, ok
}

// readAll returns every record of a topic's partitions.
func readAll(t *testing.T, tr runtime.Transport, name string) []runtime.Incoming {
	t.Helper()
	n, err := tr.Partitions(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Incoming
	for p := uint32(0); p < n; p++ {
		recs, err := tr.ReadRange(context.Background(), name, p, 0, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recs...)
	}
	return out
}

// fixture reads one AGDX vector (the module's copy, or $AGDX_FIXTURES).
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	return vectors.AGDX.Read(t, name)
}

// handlerFunc adapts a function returning an error.
func handlerFunc(f func(c *runtime.Ctx) error) runtime.Handler { return runtime.HandlerFunc(f) }

var errBoom = errors.New("boom")

// runThenHardStop runs c until started says a handler is under way (what
// names it), then stops it hard and checks Run returns context.Canceled.
func runThenHardStop(t *testing.T, c *runtime.Consumer, started <-chan struct{}, what string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil, nil) }()
	recv(t, started, what)
	cancel()
	if err := recv(t, done, "Run after the hard stop"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
}
