package reliability_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/figures"
	"github.com/lasergo/laser/internal/reliability"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The in-process rig: an iggytest server, the Iggy transport dialled to it,
// captured logs, the effect store and handler of the crash worker, and
// waits that block on what the consumer reports, never on the clock.

// waitLimit bounds every wait so a broken scenario fails instead of hanging.
const waitLimit = 20 * time.Second

// logCapture is a slog destination tests can wait on.
type logCapture struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	notify chan struct{}
}

func newLogCapture() *logCapture { return &logCapture{notify: make(chan struct{})} }

func (l *logCapture) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.buf.Write(p)
	close(l.notify)
	l.notify = make(chan struct{})
	return n, err
}

func (l *logCapture) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *logCapture) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor blocks until the log holds substr.
func (l *logCapture) waitFor(t *testing.T, substr string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		l.mu.Lock()
		found, ch := strings.Contains(l.buf.String(), substr), l.notify
		l.mu.Unlock()
		if found {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no log line containing %q; the log:\n%s", substr, l)
		}
	}
}

// rig is one scenario's world.
type rig struct {
	t      *testing.T
	ctx    context.Context
	srv    *iggytest.Server
	tr     *iggy.Transport
	logs   *logCapture
	topic  string
	dlq    string
	seed   uint64
	store  *reliability.EffectStore
	events *reliability.EventLog
	evPath string
	// clock, when set, is the clock of the clients agents start on.
	clock clock.Clock

	mu       sync.Mutex
	applied  map[string]bool
	dups     map[string]int
	parked   []runtime.DeadLetter // successful publishes only
	failures []runtime.DeadLetter // failed publishes
	changed  chan struct{}

	prod      *runtime.Client
	published []reliability.Command
	positions map[runtime.Position]int
	restarts  int
}

type rigOptions struct {
	partitions uint32
	noDLQ      bool        // leave the dead-letter topic uncreated
	transport  iggy.Config // Logger and ReconnectBackoff are the rig's
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	if o.partitions == 0 {
		o.partitions = 2
	}
	r := &rig{
		t: t, ctx: t.Context(), srv: iggytest.Start(t, iggytest.Config{}), logs: newLogCapture(),
		topic: "rel.commands", dlq: "rel.dlq", seed: 0x5ca1e,
		applied: map[string]bool{}, dups: map[string]int{}, changed: make(chan struct{}), positions: map[runtime.Position]int{},
	}
	cfg := o.transport
	cfg.Logger, cfg.ReconnectBackoff, cfg.ReconnectBackoffMax = r.logs.logger(), 5*time.Millisecond, 50*time.Millisecond
	tr, err := iggy.Dial(r.ctx, "iggy://iggy:iggy@"+r.srv.Addr()+"/reliability", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	r.tr = tr
	r.prod = runtime.NewClient(tr, runtime.ClientConfig{Logger: r.logs.logger()})
	topics := []string{r.topic, r.dlq}
	if o.noDLQ {
		topics = topics[:1]
	}
	if err := tr.EnsureTopics(r.ctx, o.partitions, topics...); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if r.store, err = reliability.OpenEffectStore(filepath.Join(dir, "effects")); err != nil {
		t.Fatal(err)
	}
	r.evPath = filepath.Join(dir, "events.log")
	if r.events, err = reliability.OpenEventLog(r.evPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.events.Close() })
	return r
}

func (r *rig) signal() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// await blocks until cond (run under r.mu) holds.
func (r *rig) await(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.After(waitLimit)
	for {
		r.mu.Lock()
		ok, ch := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s; the log:\n%s", what, r.logs)
		}
	}
}

// awaitEffects blocks until n distinct effects were applied.
func (r *rig) awaitEffects(n int) {
	r.t.Helper()
	r.await(fmt.Sprintf("%d effects", n), func() bool { return len(r.applied) >= n })
}

// awaitParked blocks until n capsules were published.
func (r *rig) awaitParked(n int) {
	r.t.Helper()
	r.await(fmt.Sprintf("%d dead letters", n), func() bool { return len(r.parked) >= n })
}

// handledUncommitted returns the keys of commands whose effect is applied
// but whose offset the group has not committed: a restarted consumer must
// deliver each of them again.
func (r *rig) handledUncommitted(group string) []string {
	r.t.Helper()
	var keys []string
	for pos, idx := range r.positions {
		c := r.published[idx]
		if c.Kind != reliability.Normal || !r.hasEffect(c.Key) {
			continue
		}
		if off, ok := r.committed(group, pos.Partition); !ok || off < pos.Offset {
			keys = append(keys, c.Key)
		}
	}
	return keys
}

// awaitRedelivered blocks until every key came back as a duplicate the
// effect store suppressed.
func (r *rig) awaitRedelivered(keys []string) {
	r.t.Helper()
	r.await(fmt.Sprintf("redelivery of %d handled but uncommitted records", len(keys)), func() bool {
		for _, k := range keys {
			if r.dups[k] == 0 {
				return false
			}
		}
		return true
	})
}

func (r *rig) hasEffect(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.applied[key]
}

// publish sends commands of the given kinds, numbered on from the last.
func (r *rig) publish(kinds ...reliability.Kind) []reliability.Command {
	r.t.Helper()
	cmds := make([]reliability.Command, len(kinds))
	recs := make([]runtime.Outgoing, len(kinds))
	for i, k := range kinds {
		c, err := reliability.NewCommand(r.seed, len(r.published)+i, k)
		if err != nil {
			r.t.Fatal(err)
		}
		cmds[i], recs[i] = c, c.Record
	}
	// The producer rides over a connection a fault just dropped.
	pos, err := r.prod.Publish(r.ctx, r.topic, recs...)
	if err != nil {
		r.t.Fatal(err)
	}
	for i, p := range pos {
		r.positions[p] = cmds[i].Index
	}
	r.published = append(r.published, cmds...)
	return cmds
}

func normal(n int) []reliability.Kind { return make([]reliability.Kind, n) }

// agentConfig is the scenario's agent: the effect handler, quick retries,
// captured logs, a sink feeding the rig. wrap may put a hook around the
// handler.
func (r *rig) agentConfig(c runtime.Concurrency, wrap func(runtime.Handler) runtime.Handler) runtime.AgentConfig {
	var h runtime.Handler = &reliability.EffectHandler{Store: r.store, Events: r.events, OnEffect: func(key string, applied bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if applied {
			r.applied[key] = true
		} else {
			r.dups[key]++
		}
		r.signal()
	}}
	if wrap != nil {
		h = wrap(h)
	}
	return runtime.AgentConfig{
		ID:      "faulty-worker",
		Listen:  r.topic,
		Handler: h,
		Tuning: runtime.Tuning{
			DeadLetterTopic: r.dlq,
			Concurrency:     c,
			Retry:           runtime.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond},
			DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) {
				r.mu.Lock()
				defer r.mu.Unlock()
				if dl.PublishErr == nil {
					r.parked = append(r.parked, dl)
				} else {
					r.failures = append(r.failures, dl)
				}
				r.signal()
			},
		},
	}
}

// start runs an agent built from cfg and waits until it is ready.
func (r *rig) start(cfg runtime.AgentConfig) *runtime.AgentHandle {
	r.t.Helper()
	client := runtime.NewClient(r.tr, runtime.ClientConfig{Logger: r.logs.logger(), Clock: r.clock})
	a, err := client.NewAgent(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	h := a.Start(r.ctx)
	r.t.Cleanup(func() { _ = h.Stop() })
	ctx, cancel := context.WithTimeout(r.ctx, waitLimit)
	defer cancel()
	if err := h.Ready(ctx); err != nil {
		r.t.Fatalf("agent not ready: %v\n%s", err, r.logs)
	}
	return h
}

// restart is start after a stop, counted in the figures.
func (r *rig) restart(cfg runtime.AgentConfig) *runtime.AgentHandle {
	r.t.Helper()
	r.restarts++
	return r.start(cfg)
}

// stopped waits for an agent to stop on its own and returns its error.
func (r *rig) stopped(h *runtime.AgentHandle) error {
	r.t.Helper()
	select {
	case <-h.Done():
		return h.Wait()
	case <-time.After(waitLimit):
		r.t.Fatalf("agent did not stop; the log:\n%s", r.logs)
		return nil
	}
}

// shutdown stops an agent gracefully and requires a clean result.
func (r *rig) shutdown(h *runtime.AgentHandle) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, waitLimit)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		r.t.Fatalf("shutdown: %v\n%s", err, r.logs)
	}
}

// running requires an agent to be still running.
func (r *rig) running(h *runtime.AgentHandle) {
	r.t.Helper()
	select {
	case <-h.Done():
		r.t.Fatalf("agent stopped: %v\n%s", h.Wait(), r.logs)
	default:
	}
}

// committed returns the group's stored offset on a partition.
func (r *rig) committed(group string, partition uint32) (uint64, bool) {
	r.t.Helper()
	off, ok, err := r.tr.StoredOffset(r.ctx, r.topic, group, partition)
	if err != nil {
		r.t.Fatal(err)
	}
	return off, ok
}

// verify is the no-loss check of a scenario: every normal command published
// has its effect exactly once (the store), every poison command exactly one
// capsule with its payload verbatim (the dead-letter topic), and nothing
// else is there. It records the scenario's figures.
func (r *rig) verify(section, name string) {
	r.t.Helper()
	t := r.t
	want := map[string]reliability.Command{}
	poison := 0
	for _, c := range r.published {
		if c.Kind == reliability.Normal {
			want[c.Key] = c
		} else {
			poison++
		}
	}
	keys, err := r.store.Keys()
	if err != nil {
		t.Fatal(err)
	}
	handled := 0
	for _, k := range keys {
		c, ok := want[k]
		if !ok {
			t.Errorf("effect %s belongs to no normal command", k)
			continue
		}
		got, err := r.store.Read(k)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, c.Record.Payload) {
			t.Errorf("effect %s holds %q, want %q", k, got, c.Record.Payload)
		}
		handled++
	}
	parked := map[int]int{}
	var capsules []*wire.DeadLetter
	if _, err := r.tr.Partitions(r.ctx, r.dlq); err == nil { // a scenario may never create it
		capsules = readCapsules(t, r.ctx, r.tr, r.dlq)
	}
	for _, dl := range capsules {
		idx, ok := r.positions[runtime.Position{Partition: dl.Source.PartitionID, Offset: dl.Source.Offset}]
		if !ok {
			t.Errorf("capsule for %s matches no published command", dl.Source)
			continue
		}
		c := r.published[idx]
		reason, isPoison := c.Kind.Reason()
		switch {
		case !isPoison:
			t.Errorf("normal command %s was dead-lettered (%s)", c.Key, dl.Reason)
		case dl.Reason != reason:
			t.Errorf("%s command %s dead-lettered as %s, want %s", c.Kind, c.Key, dl.Reason, reason)
		case !bytes.Equal(dl.Payload, c.Record.Payload):
			t.Errorf("capsule of %s does not carry the payload verbatim", c.Key)
		}
		parked[idx]++
	}
	for _, c := range r.published {
		if _, isPoison := c.Kind.Reason(); isPoison && parked[c.Index] != 1 {
			t.Errorf("%s command %s has %d capsules, want exactly 1", c.Kind, c.Key, parked[c.Index])
		}
	}
	if handled != len(want) {
		t.Errorf("%d of %d normal commands have their effect", handled, len(want))
	}
	ev, err := reliability.ReadEvents(r.evPath)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range ev.ByKey[reliability.EventApplied] {
		if n != 1 {
			t.Errorf("effect %s applied %d times", k, n)
		}
	}
	lost := len(r.published) - handled - len(parked)
	if lost != 0 {
		t.Errorf("lost %d commands", lost)
	}
	figures.Record(t, figures.Row{Section: section, Case: name, Values: []figures.Value{
		figures.V("published", len(r.published)),
		figures.V("handled", handled),
		figures.V("dup_suppressed", ev.Total[reliability.EventDuplicate]),
		figures.V("dead_lettered", len(parked)),
		figures.V("restarts", r.restarts),
		figures.V("lost", lost),
	}})
}

// variants runs a scenario with the default Serial consumer and with lanes.
func variants(t *testing.T, f func(t *testing.T, c runtime.Concurrency, name string)) {
	for _, v := range []struct {
		name string
		c    runtime.Concurrency
	}{{"serial", runtime.Serial}, {"lanes", runtime.PerPartition(2)}} {
		t.Run(v.name, func(t *testing.T) { f(t, v.c, strings.TrimPrefix(t.Name(), "TestFault")) })
	}
}

// requireErr checks an agent's stop error for every fragment.
func requireErr(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("agent stopped without an error; want one mentioning %q", fragments)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("stop error %q does not mention %q", err, f)
		}
	}
}
