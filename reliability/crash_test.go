package reliability_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/internal/figures"
	"github.com/lasergo/laser/internal/reliability"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// envSeed replays a run: the crash test prints the seed it used.
const envSeed = "LASER_RELIABILITY_SEED"

const crashPartitions = 4

// crashScale is how many commands and kills a crash run uses: a short run
// in CI, a long one under `make reliability`.
func crashScale() (commands, kills int, limit time.Duration) {
	if figures.Full() {
		return 5000, 6, 5 * time.Minute
	}
	return 300, 2, 90 * time.Second
}

// crashSeed is LASER_RELIABILITY_SEED when set; otherwise a fixed seed in
// the short run (so CI is repeatable) and a fresh one in the long run.
func crashSeed(t *testing.T) uint64 {
	t.Helper()
	if s := os.Getenv(envSeed); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", envSeed, s, err)
		}
		return seed
	}
	if figures.Full() {
		return uint64(time.Now().UnixNano())
	}
	return 1
}

// TestCrashRecovery publishes numbered commands, some of them poison, while
// a consumer process handling them is SIGKILLed at random points and
// restarted; at the end every command's effect is in the store exactly once
// or the command is in the dead-letter topic, and nothing is lost. It runs
// over the laser dev server in its own process and, when LASER_IGGY_ADDR is
// set, over that real Iggy; each with the default Serial consumer and with
// four lanes.
func TestCrashRecovery(t *testing.T) {
	laser, worker := buildBinaries(t)
	n, kills, limit := crashScale()
	seed := crashSeed(t)
	t.Logf("crash test seed %d (replay with %s=%d), %d commands, %d kills", seed, envSeed, seed, n, kills)

	for _, b := range crashBackends(laser) {
		for _, v := range crashVariants {
			t.Run(b.name+"/"+v.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				defer cancel()
				addr := b.addr(t, ctx)
				c := &crashRun{
					t: t, ctx: ctx, addr: addr, worker: worker, lanes: v.lanes, handlers: v.handlers, kills: kills,
					seed: seed,
					name: b.name + "/" + v.name,
					// Lower-case letters, digits and dashes: names any Iggy accepts,
					// fresh per run so a real server's stream can be reused.
					topic: fmt.Sprintf("rel-cmd-%d-%s-%d", seed, v.name, time.Now().UnixNano()),
				}
				c.dlq = strings.Replace(c.topic, "rel-cmd-", "rel-dlq-", 1)
				c.run(n)
			})
		}
	}
}

// crashBackend is a broker a crash run can use: addr starts it (or names
// it) and returns its connection string.
type crashBackend struct {
	name string
	addr func(t *testing.T, ctx context.Context) string
}

// crashBackends are the laser dev server in its own process and, when
// LASER_IGGY_ADDR is set, that real Iggy (skipped otherwise).
func crashBackends(laser string) []crashBackend {
	return []crashBackend{
		{"devserver", func(t *testing.T, ctx context.Context) string {
			addr, _ := startDevServer(t, ctx, laser, "reliability")
			return addr
		}},
		{"iggy", func(t *testing.T, ctx context.Context) string {
			return featuretest.RealServerAddr(t)
		}},
	}
}

// crashHandlers and crashConversations shape the PerConversation variant:
// its commands share a few conversations, so each holds many, in order.
const crashHandlers, crashConversations = 16, 24

// crashVariant is a consumer shape a crash run uses.
type crashVariant struct {
	name     string
	lanes    int
	handlers int // PerConversation's n; its plan spreads commands over crashConversations
}

// crashVariants are the consumer shapes a crash run uses.
var crashVariants = []crashVariant{{"serial", 0, 0}, {"lanes", crashPartitions, 0}, {"perconversation", 0, crashHandlers}}

// crashRun is one crash test: a backend, a consumer variant, a plan.
type crashRun struct {
	t      *testing.T
	ctx    context.Context
	name   string
	addr   string
	worker string
	lanes  int
	// handlers, when set, runs PerConversation(handlers) over a plan whose
	// conversations hold many commands, and checks their order.
	handlers int
	kills    int
	seed     uint64

	topic, dlq string
	tr         *iggy.Transport
	plan       *reliability.Plan
	positions  map[runtime.Position]int // where each command landed
	dir        string
	store      *reliability.EffectStore
	procs      []*proc
}

func (c *crashRun) run(n int) {
	c.setUp(n)
	c.crashSerially()
}

// setUp connects, creates the topics, draws the plan and opens the store.
func (c *crashRun) setUp(n int) {
	t := c.t
	tr, err := iggy.Dial(c.ctx, c.addr)
	if err != nil {
		t.Fatalf("dial %s: %v", c.addr, err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	c.tr = tr
	if err := tr.EnsureTopics(c.ctx, crashPartitions, c.topic, c.dlq); err != nil {
		t.Fatal(err)
	}
	if c.handlers > 0 {
		c.plan, err = reliability.NewConversationPlan(c.seed, n, crashConversations)
	} else {
		c.plan, err = reliability.NewPlan(c.seed, n)
	}
	if err != nil {
		t.Fatal(err)
	}
	c.dir = t.TempDir()
	if c.store, err = reliability.OpenEffectStore(filepath.Join(c.dir, "effects")); err != nil {
		t.Fatal(err)
	}
}

// crashSerially runs one worker at a time, killing it at random points.
func (c *crashRun) crashSerially() {
	t := c.t

	// The producer publishes while the worker runs and is killed.
	published := make(chan error, 1)
	go func() { published <- c.publish() }()

	rng := rand.New(rand.NewPCG(c.seed, 0x6b111))
	expected := c.plan.Count(reliability.Normal)
	var killedAt []int
	for k := 0; k < c.kills; k++ {
		p := c.startWorker()
		cur := c.effects()
		// Spread the kills over what is left, each after at least one new
		// effect of this incarnation.
		span := max(1, (expected-cur)/(c.kills-k+1))
		threshold := min(cur+1+rng.IntN(2*span), expected)
		c.await(p, fmt.Sprintf("effect count to reach %d", threshold), func() (bool, error) {
			return c.effects() >= threshold, nil
		})
		p.kill()
		killedAt = append(killedAt, c.effects())
	}

	// The last incarnation finishes the work: every partition committed to
	// its end once the producer is done.
	final := c.startWorker()
	c.awaitReady(final)
	c.await(final, "every record to be handled and committed", c.finished(published, nil))
	if err := final.terminate(30 * time.Second); err != nil {
		t.Fatalf("final worker: %v", err)
	}
	c.verify(killedAt)
}

// publish sends the plan in batches and records where each command landed.
func (c *crashRun) publish() error {
	const batch = 64
	positions := make(map[runtime.Position]int, len(c.plan.Commands))
	for start := 0; start < len(c.plan.Commands); start += batch {
		cmds := c.plan.Commands[start:min(start+batch, len(c.plan.Commands))]
		recs := make([]runtime.Outgoing, len(cmds))
		for i, cmd := range cmds {
			recs[i] = cmd.Record
		}
		pos, err := c.tr.Publish(c.ctx, c.topic, recs...)
		if err != nil {
			return fmt.Errorf("publish commands %d..: %w", start, err)
		}
		for i, p := range pos {
			positions[p] = cmds[i].Index
		}
	}
	c.positions = positions // read only after the channel receive
	return nil
}

func (c *crashRun) startWorker(extra ...string) *proc {
	c.t.Helper()
	args := []string{
		"-addr", c.addr, "-topic", c.topic, "-dlq", c.dlq,
		"-effects", c.store.Dir(), "-events", filepath.Join(c.dir, "events.log"),
		"-lanes", strconv.Itoa(c.lanes), "-handlers", strconv.Itoa(c.handlers),
	}
	args = append(args, extra...)
	p := startProc(c.t, fmt.Sprintf("crashworker #%d", len(c.procs)+1), c.worker, args...)
	c.procs = append(c.procs, p)
	return p
}

// awaitReady waits until p reports ready: a worker that the test stops
// before it installed its signal handler would die of the SIGTERM instead
// of draining (a fast consumer may have committed everything already).
func (c *crashRun) awaitReady(p *proc) {
	c.t.Helper()
	if _, err := p.waitLine(c.ctx, "ready"); err != nil {
		c.t.Fatal(err)
	}
}

// await polls cond (the worker's effects live in another process) and
// fails the test if the worker exits on its own meanwhile.
func (c *crashRun) await(p *proc, what string, cond func() (bool, error)) {
	c.t.Helper()
	err := pollUntil(c.ctx, 2*time.Millisecond, what, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("%s exited on its own: %v\n%s", p.name, p.err, p.stderr)
		}
		return cond()
	})
	if err != nil {
		c.t.Fatal(err)
	}
}

func (c *crashRun) effects() int {
	n, err := c.store.Count()
	if err != nil {
		c.t.Fatal(err)
	}
	return n
}

// finished returns the condition of the end of a run: the producer is done
// (published delivered its result) and every partition is committed to its
// end. alive, when set, fails the wait if a worker has died meanwhile.
func (c *crashRun) finished(published <-chan error, alive func() error) func() (bool, error) {
	producerDone := false
	return func() (bool, error) {
		if alive != nil {
			if err := alive(); err != nil {
				return false, err
			}
		}
		if !producerDone {
			select {
			case err := <-published:
				if err != nil {
					return false, err
				}
				producerDone = true
			default:
				return false, nil
			}
		}
		return c.allCommitted()
	}
}

// allCommitted reports whether the group's stored offset is at the end of
// every partition.
func (c *crashRun) allCommitted() (bool, error) {
	for p := uint32(0); p < crashPartitions; p++ {
		next, err := c.tr.NextOffset(c.ctx, c.topic, p)
		if err != nil {
			return false, err
		}
		if next == 0 {
			continue
		}
		stored, ok, err := c.tr.StoredOffset(c.ctx, c.topic, "crashworker", p)
		if err != nil {
			return false, err
		}
		if !ok || stored+1 < next {
			return false, nil
		}
	}
	return true, nil
}

// verify checks the effect store, the dead-letter topic and the event log
// against the plan, then reports the figures.
func (c *crashRun) verify(killedAt []int) {
	t := c.t
	byKey := map[string]reliability.Command{}
	for _, cmd := range c.plan.Commands {
		byKey[cmd.Key] = cmd
	}

	// Effects: exactly the normal commands, each holding its own payload.
	keys, err := c.store.Keys()
	if err != nil {
		t.Fatal(err)
	}
	effects := 0
	for _, k := range keys {
		cmd, ok := byKey[k]
		if !ok || cmd.Kind != reliability.Normal {
			t.Errorf("effect %q belongs to no normal command", k)
			continue
		}
		got, err := c.store.Read(k)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, cmd.Record.Payload) {
			t.Errorf("effect %s holds %q, want %q", k, got, cmd.Record.Payload)
		}
		effects++
	}
	for _, cmd := range c.plan.Commands {
		if _, err := os.Stat(filepath.Join(c.store.Dir(), cmd.Key)); cmd.Kind == reliability.Normal && err != nil {
			t.Errorf("command %s was never applied: %v", cmd.Key, err)
		}
	}

	// Dead letters: every poison command at least once, with its reason and
	// its payload verbatim; nothing else.
	capsules := readCapsules(t, c.ctx, c.tr, c.dlq)
	parked := map[int]int{}
	for _, dl := range capsules {
		idx, ok := c.positions[runtime.Position{Partition: dl.Source.PartitionID, Offset: dl.Source.Offset}]
		if !ok {
			t.Errorf("capsule for %s matches no published command", dl.Source)
			continue
		}
		cmd := c.plan.Commands[idx]
		want, poison := cmd.Kind.Reason()
		if !poison {
			t.Errorf("normal command %s was dead-lettered (%s)", cmd.Key, dl.Reason)
			continue
		}
		if dl.Reason != want {
			t.Errorf("%s command %s dead-lettered as %s, want %s", cmd.Kind, cmd.Key, dl.Reason, want)
		}
		if !bytes.Equal(dl.Payload, cmd.Record.Payload) {
			t.Errorf("capsule of %s carries %q, want the payload verbatim %q", cmd.Key, dl.Payload, cmd.Record.Payload)
		}
		parked[idx]++
	}
	for _, cmd := range c.plan.Commands {
		if _, poison := cmd.Kind.Reason(); poison && parked[cmd.Index] == 0 {
			t.Errorf("%s command %s was never dead-lettered", cmd.Kind, cmd.Key)
		}
	}

	// The event log: no effect applied by two incarnations. (An incarnation
	// killed between applying and logging leaves an effect without its
	// line, so a key may have none.)
	ev, err := reliability.ReadEvents(filepath.Join(c.dir, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range ev.ByKey[reliability.EventApplied] {
		if n > 1 {
			t.Errorf("effect %s applied %d times", k, n)
		}
	}
	// Within a conversation, every effect found its predecessor's applied.
	for k := range ev.ByKey[reliability.EventOutOfOrder] {
		t.Errorf("effect %s was applied before the previous command of its conversation", k)
	}

	lost := len(c.plan.Commands) - effects - len(parked)
	if lost != 0 {
		t.Errorf("lost %d commands", lost)
	}
	figures.Record(t, figures.Row{Section: "crash", Case: c.name, Values: []figures.Value{
		figures.V("published", len(c.plan.Commands)),
		figures.V("handled", effects),
		figures.V("dup_suppressed", ev.Total[reliability.EventDuplicate]),
		figures.V("dedup_drops", ev.Total[reliability.EventDedup]),
		figures.V("dead_lettered", len(parked)),
		figures.V("dlq_repeats", len(capsules)-len(parked)),
		figures.V("kills", len(killedAt)),
		figures.V("starts", ev.Total[reliability.EventStart]),
		figures.V("lost", lost),
		figures.V("out_of_order", ev.Total[reliability.EventOutOfOrder]),
		figures.V("seed", c.seed),
	}})
	t.Logf("killed at effect counts %v", killedAt)
}

// readCapsules reads and decodes every capsule of a dead-letter topic.
func readCapsules(t *testing.T, ctx context.Context, tr runtime.Transport, topic string) []*wire.DeadLetter {
	t.Helper()
	n, err := tr.Partitions(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var out []*wire.DeadLetter
	for p := uint32(0); p < n; p++ {
		for off := uint64(0); ; {
			recs, err := tr.ReadRange(ctx, topic, p, off, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 0 {
				break
			}
			for _, r := range recs {
				dl, err := wire.DecodeDeadLetter(r.Payload)
				if err != nil {
					t.Fatalf("%s %s: not a capsule: %v", topic, r.Position, err)
				}
				out = append(out, dl)
			}
			off = recs[len(recs)-1].Offset + 1
		}
	}
	return out
}
