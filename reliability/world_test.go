package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// world is the hostile-input and signature harness: one single-partition
// topic (so a sentinel published last proves every earlier record was
// processed), a consumer whose handler records what it saw and rejects
// bodies starting "reject:", and a sink collecting dead letters. It runs
// over the embedded log and over the Iggy transport to the test server.
type world struct {
	t     *testing.T
	ctx   context.Context
	name  string // the transport
	tr    runtime.Transport
	clock *lasertest.ManualClock // the broker's clock (record timestamps)
	logs  *logCapture
	topic string
	dlq   string

	mu      sync.Mutex
	handled map[runtime.Position]int
	bodies  map[runtime.Position]int // body length seen by the handler
	sunk    []runtime.DeadLetter
	changed chan struct{}
	// fail, when set, gives the handler's error for a message (nil: the
	// usual handling).
	fail func(m *runtime.Message) error
}

// brokerEpoch is where the broker's clock stands: every record's timestamp.
var brokerEpoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// overTransports runs f over the embedded log and over the Iggy transport.
func overTransports(t *testing.T, f func(t *testing.T, w *world)) {
	for _, name := range []string{"embedlog", "iggy"} {
		t.Run(name, func(t *testing.T) {
			w := &world{
				t: t, ctx: t.Context(), name: name, clock: lasertest.NewManualClock(brokerEpoch), logs: newLogCapture(),
				topic: "rel.hostile", dlq: "rel.hostile.dlq",
				handled: map[runtime.Position]int{}, bodies: map[runtime.Position]int{}, changed: make(chan struct{}),
			}
			switch name {
			case "embedlog":
				w.tr = embedlog.New("reliability", embedlog.Config{Clock: w.clock})
			case "iggy":
				srv := iggytest.Start(t, iggytest.Config{Clock: w.clock})
				tr, err := iggy.Dial(w.ctx, "iggy://iggy:iggy@"+srv.Addr()+"/reliability", iggy.Config{Logger: w.logs.logger()})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = tr.Close() })
				w.tr = tr
			}
			if err := w.tr.EnsureTopics(w.ctx, 1, w.topic, w.dlq); err != nil {
				t.Fatal(err)
			}
			f(t, w)
		})
	}
}

// start runs the world's consumer with cfg's Verifier and Concurrency.
func (w *world) start(c runtime.Concurrency, verifier runtime.Verifier) *runtime.AgentHandle {
	w.t.Helper()
	client := runtime.NewClient(w.tr, runtime.ClientConfig{Logger: w.logs.logger()})
	a, err := client.NewAgent(runtime.AgentConfig{
		ID:     "hostile-worker",
		Listen: w.topic,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			m := c.Message()
			w.mu.Lock()
			w.handled[m.Position]++
			w.bodies[m.Position] = len(m.Body())
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
			if w.fail != nil {
				if err := w.fail(m); err != nil {
					return err
				}
			}
			if strings.HasPrefix(string(m.Body()), "reject:") {
				return runtime.Reject(fmt.Errorf("refused %s", m.Position))
			}
			return nil
		}),
		Verifier: verifier,
		Tuning: runtime.Tuning{
			DeadLetterTopic: w.dlq,
			Concurrency:     c,
			Retry:           runtime.RetryPolicy{MaxAttempts: 1},
			DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) {
				w.mu.Lock()
				w.sunk = append(w.sunk, dl)
				close(w.changed)
				w.changed = make(chan struct{})
				w.mu.Unlock()
			},
		},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	h := a.Start(w.ctx)
	w.t.Cleanup(func() { _ = h.Stop() })
	ctx, cancel := context.WithTimeout(w.ctx, waitLimit)
	defer cancel()
	if err := h.Ready(ctx); err != nil {
		w.t.Fatalf("agent not ready: %v\n%s", err, w.logs)
	}
	return h
}

// publish appends one record and returns its position.
func (w *world) publish(headers wire.Headers, payload []byte) (runtime.Position, error) {
	pos, err := w.tr.Publish(w.ctx, w.topic, runtime.Outgoing{Key: "hostile", Headers: headers, Payload: payload})
	if err != nil {
		return runtime.Position{}, err
	}
	return pos[0], nil
}

// awaitHandled blocks until the record at p was handled.
func (w *world) awaitHandled(p runtime.Position) {
	w.t.Helper()
	deadline := time.After(waitLimit)
	for {
		w.mu.Lock()
		ok, ch := w.handled[p] > 0, w.changed
		w.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			w.t.Fatalf("record %s was never handled; the log:\n%s", p, w.logs)
		}
	}
}

// sinkFor returns the dead letters the sink heard of for source p.
func (w *world) sinkFor(p runtime.Position) []runtime.DeadLetter {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []runtime.DeadLetter
	for _, dl := range w.sunk {
		if dl.Capsule.Source.PartitionID == p.Partition && dl.Capsule.Source.Offset == p.Offset {
			out = append(out, dl)
		}
	}
	return out
}

// capsules reads the dead-letter topic, keyed by source position, with the
// headers each capsule travelled with.
func (w *world) capsules() map[runtime.Position][]capsule {
	w.t.Helper()
	out := map[runtime.Position][]capsule{}
	recs, err := w.tr.ReadRange(w.ctx, w.dlq, 0, 0, 1<<16)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, r := range recs {
		dl, err := wire.DecodeDeadLetter(r.Payload)
		if err != nil {
			w.t.Fatalf("%s %s is not a capsule: %v", w.dlq, r.Position, err)
		}
		src := runtime.Position{Partition: dl.Source.PartitionID, Offset: dl.Source.Offset}
		out[src] = append(out[src], capsule{dl: dl, headers: r.Headers.Decode()})
	}
	return out
}

type capsule struct {
	dl      *wire.DeadLetter
	headers wire.Headers
}

// committedThrough requires the group's stored offset to have reached p.
func (w *world) committedThrough(p runtime.Position) {
	w.t.Helper()
	off, ok, err := w.tr.StoredOffset(w.ctx, w.topic, "hostile-worker", p.Partition)
	if err != nil {
		w.t.Fatal(err)
	}
	if !ok || off < p.Offset {
		w.t.Errorf("committed offset %d (stored %v), want at least %d", off, ok, p.Offset)
	}
}

// running requires the consumer to be still running.
func (w *world) running(h *runtime.AgentHandle) {
	w.t.Helper()
	select {
	case <-h.Done():
		w.t.Fatalf("consumer stopped: %v\n%s", h.Wait(), w.logs)
	default:
	}
}

// shutdown stops the consumer gracefully and requires a clean result.
func (w *world) shutdown(h *runtime.AgentHandle) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.ctx, waitLimit)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		w.t.Fatalf("shutdown: %v\n%s", err, w.logs)
	}
}
