package govern_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// world is one test's embedded log and a client governed by a gate.
type world struct {
	t    *testing.T
	ctx  context.Context
	tr   runtime.Transport
	c    *runtime.Client
	gate *govern.Gate
}

// governed returns a world whose client is governed by gov under opts.
func governed(t *testing.T, gov govern.Governor, opts govern.Config) *world {
	t.Helper()
	tr := embedlog.New("laser", embedlog.Config{})
	if err := runtime.NewClient(tr, runtime.ClientConfig{}).Bootstrap(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	gate := govern.NewGate(gov, opts)
	c := runtime.NewClient(tr, runtime.ClientConfig{EffectGate: gate})
	t.Cleanup(func() { _ = c.Close() })
	return &world{t: t, ctx: t.Context(), tr: tr, c: c, gate: gate}
}

// fixed is a governor that always decides d.
func fixed(d govern.Decision) govern.Governor {
	return govern.GovernorFunc(func(context.Context, *govern.Action) (govern.Decision, error) { return d, nil })
}

// messages returns every message on topic.
func (w *world) messages(topic string) []*runtime.Message {
	w.t.Helper()
	var out []*runtime.Message
	n, err := w.tr.Partitions(w.ctx, topic)
	if err != nil {
		w.t.Fatal(err)
	}
	for p := range n {
		end, err := w.tr.NextOffset(w.ctx, topic, p)
		if err != nil {
			w.t.Fatal(err)
		}
		recs, err := w.tr.ReadRange(w.ctx, topic, p, 0, int(end))
		if err != nil {
			w.t.Fatal(err)
		}
		for i := range recs {
			m, err := runtime.DecodeRecord(topic, &recs[i], 0)
			if err != nil {
				w.t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

// evidence returns the decisions recorded on agent.audit.
func (w *world) evidence() []*govern.Evidence {
	w.t.Helper()
	entries, err := govern.ReadAudit(w.ctx, w.tr, "")
	if err != nil {
		w.t.Fatal(err)
	}
	var out []*govern.Evidence
	for _, e := range entries {
		if e.Err != nil {
			w.t.Fatal(e.Err)
		}
		out = append(out, e.Evidence)
	}
	return out
}

// onlyEvidence returns the one decision recorded, failing unless there is
// exactly one.
func (w *world) onlyEvidence() *govern.Evidence {
	w.t.Helper()
	evs := w.evidence()
	if len(evs) != 1 {
		w.t.Fatalf("recorded %d decisions, want 1", len(evs))
	}
	return evs[0]
}

// emit publishes an event "wire-funds" from planner on agent.commands.
func (w *world) emit(opts ...runtime.Option) (*wire.Envelope, error) {
	return w.c.Send(w.ctx, runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "planner", Body: []byte("wire-funds")}, opts...)
}
