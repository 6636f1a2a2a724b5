package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// newClient returns a client over a bootstrapped embedded log.
func newClient(t *testing.T, tr runtime.Transport, clock clock.Clock, verifier runtime.Verifier) *runtime.Client {
	t.Helper()
	c := runtime.NewClient(tr, runtime.ClientConfig{Clock: clock, Logger: quietLogger(), Verifier: verifier})
	if err := c.Bootstrap(context.Background(), 4); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// runAgent starts an agent and waits until it is ready.
func runAgent(t *testing.T, c *runtime.Client, cfg runtime.AgentConfig) *runtime.AgentHandle {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = runtime.TopicCommands
	}
	a, err := c.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop() })
	return h
}

// echo answers every command with its body upper-cased by a prefix.
func echo(prefix string) runtime.Handler {
	return handlerFunc(func(c *runtime.Ctx) error {
		return c.Respond(append([]byte(prefix), c.Message().Body()...))
	})
}

func TestRequestReplyBetweenTwoAgents(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	if err := log.EnsureTopics(context.Background(), 1, "shop.in"); err != nil {
		t.Fatal(err)
	}
	runAgent(t, c, runtime.AgentConfig{ID: "billing", Respond: runtime.TopicResponses, Handler: echo("charged ")})
	// The caller is itself an agent that asks billing from inside a handler.
	got := make(chan string, 1)
	runAgent(t, c, runtime.AgentConfig{ID: "shop", Listen: "shop.in", Respond: runtime.TopicResponses,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			reply, err := ctx.Client().Request(ctx, runtime.Out{Topic: runtime.TopicCommands, Target: "billing", Body: ctx.Message().Body()}, runtime.WithTimeout(waitLimit))
			if err != nil {
				return runtime.Reject(err)
			}
			got <- string(reply.Body()) + " from " + reply.Provenance.Agent
			return nil
		})})
	if _, err := c.SendPlain(context.Background(), "shop.in", wire.Provenance{Conversation: conv(), Agent: "user"}, []byte("order 7")); err != nil {
		t.Fatal(err)
	}
	if reply := recv(t, got, "reply"); reply != "charged order 7 from billing" {
		t.Fatalf("reply = %q", reply)
	}
}

// instantReplies publishes the reply to a command before the command itself,
// so the reply is on the log before the caller even starts waiting.
type instantReplies struct {
	runtime.Transport
}

func (r *instantReplies) Publish(ctx context.Context, topic string, recs ...runtime.Outgoing) ([]runtime.Position, error) {
	if topic == runtime.TopicCommands {
		env, err := wire.DecodeEnvelope(recs[0].Payload)
		if err != nil {
			return nil, err
		}
		prov := wire.Provenance{Conversation: env.Conversation, Agent: "fast", Correlation: env.Correlation.String()}
		headers, _ := prov.Headers()
		if _, err := r.Transport.Publish(ctx, runtime.TopicResponses, runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: []byte("already here")}); err != nil {
			return nil, err
		}
	}
	return r.Transport.Publish(ctx, topic, recs...)
}

func TestReplyArrivingBeforeTheCallerWaitsIsNotLost(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, &instantReplies{Transport: log}, clock.System{}, nil)
	reply, err := c.Request(context.Background(), runtime.Out{From: "caller", Target: "fast", Body: []byte("q")}, runtime.WithTimeout(waitLimit))
	if err != nil {
		t.Fatal(err)
	}
	if string(reply.Body()) != "already here" {
		t.Fatalf("reply = %q", reply.Body())
	}
}

func TestRequestTimeoutIsADistinctError(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := embedlog.New("laser", embedlog.Config{Clock: clock})
	c := newClient(t, log, clock, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Request(context.Background(), runtime.Out{From: "caller", Target: "nobody", Body: []byte("q")}, runtime.WithTimeout(time.Second))
		errc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := clock.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	err := recv(t, errc, "request result")
	if runtime.CodeOf(err) != runtime.CodeTimeout {
		t.Fatalf("err = %v", err)
	}
}

func TestRemoteErrorReachesTheCaller(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	runAgent(t, c, runtime.AgentConfig{ID: "billing", Respond: runtime.TopicResponses,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			return ctx.Fail(wire.ErrorInvalidRequest, "card declined", false)
		})})
	_, err := c.Request(context.Background(), runtime.Out{From: "shop", Target: "billing", Body: []byte("x")}, runtime.WithTimeout(waitLimit))
	var re *runtime.Error
	if !(errors.As(err, &re) && re.Remote()) || re.Wire != wire.ErrorInvalidRequest || re.Msg != "card declined" || re.From != "billing" || re.Retryable {
		t.Fatalf("err = %#v", err)
	}
}

// advanceWhenTimer waits until a timer exactly d away is pending (proof that
// the code under test reached the wait that arms it), then advances by d.
func advanceWhenTimer(t *testing.T, clock *lasertest.ManualClock, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for n := 1; ; n++ {
		if err := clock.BlockUntil(ctx, n); err != nil {
			t.Fatalf("no timer of %v among %v: %v", d, clock.Timers(), err)
		}
		for _, pending := range clock.Timers() {
			if pending == d {
				clock.Advance(d)
				return
			}
		}
	}
}

func TestContractTellsNotPickedUpFromConsumedThenTimedOut(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := embedlog.New("laser", embedlog.Config{Clock: clock})
	c := newClient(t, log, clock, nil)

	// Nobody listens for "ghost": the expiry passes without a pickup.
	res := make(chan *runtime.ContractResult, 1)
	go func() {
		r, err := c.SendContract(context.Background(), runtime.Contract{
			Out:    runtime.Out{From: "boss", Target: "ghost", Body: []byte("x")},
			Expiry: time.Second, Deadline: 5 * time.Second})
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	advanceWhenTimer(t, clock, time.Second)
	r := recv(t, res, "contract result")
	if r.Reply != nil || r.Consumed || runtime.CodeOf(r.Err()) != runtime.CodeNotPickedUp {
		t.Fatalf("result %+v err %v", r, r.Err())
	}

	// "slow" acknowledges pickup, then never answers: consumed, then timed out.
	picked := make(chan struct{}, 1)
	runAgent(t, c, runtime.AgentConfig{ID: "slow", Respond: runtime.TopicResponses,
		Tuning: runtime.Tuning{AckOnPickup: true},
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			picked <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		})})
	go func() {
		r, err := c.SendContract(context.Background(), runtime.Contract{
			Out:    runtime.Out{From: "boss", Target: "slow", Body: []byte("x")},
			Expiry: time.Second, Deadline: 5 * time.Second})
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	recv(t, picked, "pickup")
	// Once the ack is seen the contract waits for the deadline alone (5 s
	// away); the expiry no longer matters.
	advanceWhenTimer(t, clock, 5*time.Second)
	r = recv(t, res, "contract result")
	if r.Reply != nil || !r.Consumed || runtime.CodeOf(r.Err()) != runtime.CodeTimeout {
		t.Fatalf("result %+v err %v", r, r.Err())
	}
}

func TestContractCompletesWithSignedReplyOnlyThroughVerifier(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	key, forger := newKey(9), newKey(10)
	reg := sign.NewRegistry()
	if err := reg.Enroll("crediter", key.Public()); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, log, clock.System{}, reg)
	// Two impostors in other groups answer first under the target's name:
	// one unsigned, one signing with an unenrolled key. Only the honest
	// signed reply may complete the contract.
	answered := make(chan struct{}, 2)
	for i, k := range []*sign.Key{nil, forger} {
		// Each impostor runs on a client of its own: one client runs one
		// agent per id.
		runAgent(t, newClient(t, log, clock.System{}, nil), runtime.AgentConfig{ID: "crediter", Group: fmt.Sprintf("impostors-%d", i), Respond: runtime.TopicResponses,
			SigningKey: k,
			Handler: handlerFunc(func(ctx *runtime.Ctx) error {
				err := ctx.Respond([]byte("forged"))
				answered <- struct{}{}
				return err
			})})
	}
	runAgent(t, c, runtime.AgentConfig{ID: "crediter", Respond: runtime.TopicResponses,
		SigningKey: key,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			recv(t, answered, "first impostor")
			recv(t, answered, "second impostor")
			return ctx.Respond([]byte("credited"))
		})})
	r, err := c.SendContract(context.Background(), runtime.Contract{
		Out: runtime.Out{From: "bank", Target: "crediter", Body: []byte("credit 5")}, Deadline: waitLimit})
	if err != nil {
		t.Fatal(err)
	}
	if r.Reply == nil {
		t.Fatalf("%v without a reply", r.Err())
	}
	if r.Err() != nil || string(r.Reply.Body()) != "credited" || r.Reply.VerifiedPrincipal != "crediter" {
		t.Fatalf("err %v reply %q principal %q", r.Err(), r.Reply.Body(), r.Reply.VerifiedPrincipal)
	}
}

func TestTwoReplicasInOneGroupShareTheWorkAndHandleEachMessageOnce(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	const n = 200
	var mu sync.Mutex
	seen := map[string]int{}
	perReplica := [2]atomic.Int32{}
	all := make(chan struct{}, n)
	for i := range 2 {
		// Replicas run on clients of their own, as in separate processes.
		replica := newClient(t, log, clock.System{}, nil)
		runAgent(t, replica, runtime.AgentConfig{ID: "worker", Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			mu.Lock()
			seen[string(ctx.Message().Body())]++
			mu.Unlock()
			perReplica[i].Add(1)
			all <- struct{}{}
			return nil
		})})
	}
	for i := range n {
		if _, err := c.SendPlain(context.Background(), runtime.TopicCommands, wire.Provenance{Conversation: conv()}, fmt.Appendf(nil, "m%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		recv(t, all, "handled message")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n {
		t.Fatalf("%d distinct messages handled, want %d", len(seen), n)
	}
	for body, k := range seen {
		if k != 1 {
			t.Fatalf("%s handled %d times", body, k)
		}
	}
	if perReplica[0].Load() == 0 || perReplica[1].Load() == 0 {
		t.Fatalf("one replica got nothing: %d / %d", perReplica[0].Load(), perReplica[1].Load())
	}
}

func TestShutdownUnderLoadLosesNothingAcrossARestart(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	const n = 300
	var mu sync.Mutex
	handled := map[string]int{}
	progress := make(chan struct{}, n)
	handler := handlerFunc(func(ctx *runtime.Ctx) error {
		body := string(ctx.Message().Body())
		if body[len(body)-1] == '7' { // every tenth message is poison
			return runtime.Reject(fmt.Errorf("poison %s", body))
		}
		mu.Lock()
		handled[body]++
		mu.Unlock()
		progress <- struct{}{}
		return nil
	})
	cfg := runtime.AgentConfig{ID: "worker", Listen: runtime.TopicCommands, Handler: handler,
		Tuning: runtime.Tuning{Concurrency: runtime.PerPartition(4)}}
	a, err := c.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := c.SendPlain(context.Background(), runtime.TopicCommands, wire.Provenance{Conversation: conv()}, fmt.Appendf(nil, "m%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Shut down while messages are still flowing.
	for range n / 3 {
		recv(t, progress, "progress")
	}
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	h = runAgent(t, c, cfg)
	want := n - n/10
	for {
		mu.Lock()
		got := len(handled)
		mu.Unlock()
		if got == want {
			break
		}
		recv(t, progress, "progress after restart")
	}
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for body, k := range handled {
		if k != 1 {
			t.Fatalf("%s handled %d times", body, k)
		}
	}
	capsules := readAll(t, log, runtime.TopicDLQ)
	if len(capsules) != n/10 {
		t.Fatalf("%d dead letters, want %d", len(capsules), n/10)
	}
	if len(handled)+len(capsules) != n {
		t.Fatalf("handled %d + parked %d != published %d", len(handled), len(capsules), n)
	}
}

func TestAgentHandleReadyShutdownAndDroppedHandle(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	got := make(chan string, 1)
	a, err := c.NewAgent(runtime.AgentConfig{ID: "solo", Listen: runtime.TopicCommands,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error { got <- string(ctx.Message().Body()); return nil })})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan error, 1)
	func() {
		// The handle goes out of scope here; the agent must keep running.
		h := a.Start(ctx)
		ready <- h.Ready(ctx)
	}()
	if err := recv(t, ready, "ready"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendPlain(context.Background(), runtime.TopicCommands, wire.Provenance{Conversation: conv()}, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	if b := recv(t, got, "handled after the handle was dropped"); b != "still here" {
		t.Fatal(b)
	}
}

// TestNewAgentRejectsEachInvalidConfig: every configuration error is
// reported by NewAgent, as a CodeConfig naming the problem, so no handle is
// ever returned for an agent that cannot run.
func TestNewAgentRejectsEachInvalidConfig(t *testing.T) {
	c := newClient(t, embedlog.New("laser", embedlog.Config{}), clock.System{}, nil)
	h := handlerFunc(func(*runtime.Ctx) error { return nil })
	for _, tc := range []struct {
		name string
		cfg  runtime.AgentConfig
		want string
	}{
		{"no id", runtime.AgentConfig{Listen: "t", Handler: h}, "needs an id"},
		{"bad id", runtime.AgentConfig{ID: "bad\x01id", Listen: "t", Handler: h}, "agent id"},
		{"no listen topic", runtime.AgentConfig{ID: "ok", Handler: h}, "needs a listen topic"},
		{"no handler", runtime.AgentConfig{ID: "ok", Listen: "t"}, "needs a handler"},
		{"bad group", runtime.AgentConfig{ID: "ok", Listen: "t", Handler: h, Group: "bad\x01group"}, "group name"},
		{"card topic without a card", runtime.AgentConfig{ID: "ok", Listen: "t", Handler: h, CardTopic: runtime.TopicRegistry}, "publishes its card but has none"},
		{"lanes and handlers", runtime.AgentConfig{ID: "ok", Listen: "t", Handler: h,
			Tuning: runtime.Tuning{Concurrency: runtime.Concurrency{Lanes: 2, Handlers: 2}}}, "both Lanes and Handlers"},
		{"dedup window too large", runtime.AgentConfig{ID: "ok", Listen: "t", Handler: h,
			Tuning: runtime.Tuning{DedupWindow: 1 << 31}}, "DedupWindow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := c.NewAgent(tc.cfg)
			if runtime.CodeOf(err) != runtime.CodeConfig || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a config error containing %q", err, tc.want)
			}
			if a != nil {
				t.Fatalf("NewAgent returned an agent for an invalid config")
			}
		})
	}
}

func TestAgentThatCannotJoinFailsReady(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()})
	a, err := c.NewAgent(runtime.AgentConfig{ID: "lonely", Listen: "no.such.topic", Handler: handlerFunc(func(*runtime.Ctx) error { return nil })})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(context.Background())
	if err := h.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "agent stopped before it became ready") {
		t.Fatalf("err = %v", err)
	}
}

func TestBootstrapIsIdempotent(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	for range 2 {
		if err := runtime.NewClient(log, runtime.ClientConfig{}).Bootstrap(context.Background(), 3, "custom.topic"); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range append(runtime.BootstrapTopics, "custom.topic") {
		n, err := log.Partitions(context.Background(), name)
		if err != nil || n != 3 {
			t.Fatalf("%s: %d partitions, %v", name, n, err)
		}
	}
	if _, err := log.Partitions(context.Background(), runtime.TopicRegistry); err == nil {
		t.Fatal("the registry topic is created lazily, not by bootstrap")
	}
}

func TestSendStaysInTheConversationWithCausalParent(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	got := make(chan *runtime.Message, 1)
	runAgent(t, c, runtime.AgentConfig{ID: "executor", Listen: runtime.TopicToolCalls,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error { got <- ctx.Message(); return nil })})
	type planned struct {
		sent runtime.Position
		sub  wire.Provenance
	}
	plans := make(chan planned, 1)
	runAgent(t, c, runtime.AgentConfig{ID: "planner", Handler: handlerFunc(func(ctx *runtime.Ctx) error {
		sub := ctx.SpawnSubconversation()
		sent, err := ctx.Send(runtime.TopicToolCalls, "executor", []byte("step 1"), runtime.WithIdempotencyKey("step-1"))
		plans <- planned{sent, sub}
		return err
	})})
	origin := conv()
	in, err := c.SendPlain(context.Background(), runtime.TopicCommands, wire.Provenance{Conversation: origin, Agent: "user"}, []byte("plan"))
	if err != nil {
		t.Fatal(err)
	}
	m := recv(t, got, "forwarded message")
	plan := recv(t, plans, "planner result")
	sent, sub := plan.sent, plan.sub
	p := m.Provenance
	if p.Conversation != origin || p.Agent != "planner" || p.Target != "executor" || p.IdempotencyKey != "step-1" {
		t.Fatalf("provenance %+v", p)
	}
	if p.CausalParent == nil || *p.CausalParent != (wire.MessageID{Partition: in.Partition, Offset: in.Offset}) {
		t.Fatalf("causal parent %v, want %v", p.CausalParent, in)
	}
	if m.Position != sent {
		t.Fatalf("Send reported %v, message at %v", sent, m.Position)
	}
	if sub.Conversation == origin || sub.ParentConversation == nil || *sub.ParentConversation != origin || *sub.RootConversation != origin {
		t.Fatalf("subconversation %+v", sub)
	}
}

// flakyPublish fails the first failures publishes with err.
type flakyPublish struct {
	runtime.Transport
	failures atomic.Int32
	err      error
	calls    atomic.Int32
}

func (f *flakyPublish) Publish(ctx context.Context, topic string, recs ...runtime.Outgoing) ([]runtime.Position, error) {
	f.calls.Add(1)
	if f.failures.Add(-1) >= 0 {
		return nil, f.err
	}
	return f.Transport.Publish(ctx, topic, recs...)
}

func TestPublishRetriesTransientErrorsAndSurfacesTheRest(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	if err := runtime.NewClient(log, runtime.ClientConfig{}).Bootstrap(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	transient := &flakyPublish{Transport: log, err: &runtime.Error{Code: runtime.CodeTransport, Msg: "publish", Retryable: true, Err: errors.New("reset")}}
	transient.failures.Store(2)
	p := runtime.NewClient(transient, runtime.ClientConfig{Logger: quietLogger(), PublishBackoff: time.Nanosecond})
	if _, err := p.Publish(context.Background(), runtime.TopicCommands, runtime.Outgoing{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if transient.calls.Load() != 3 {
		t.Fatalf("%d calls, want 3", transient.calls.Load())
	}
	permanent := &flakyPublish{Transport: log, err: errors.New("topic is gone")}
	permanent.failures.Store(1)
	p = runtime.NewClient(permanent, runtime.ClientConfig{Logger: quietLogger(), PublishBackoff: time.Nanosecond})
	if _, err := p.Publish(context.Background(), runtime.TopicCommands, runtime.Outgoing{Payload: []byte("x")}); err == nil {
		t.Fatal("a permanent error must surface")
	}
	if permanent.calls.Load() != 1 {
		t.Fatal("a permanent error must not be retried")
	}
}

func TestAnswerIsNotLostBehindAFloodOfStatuses(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	runAgent(t, c, runtime.AgentConfig{ID: "chatty", Respond: runtime.TopicResponses,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			for range 40 {
				if err := ctx.Respond(nil, runtime.WithTaskState(wire.TaskWorking)); err != nil {
					return err
				}
			}
			return ctx.Respond([]byte("done at last"))
		})})
	for range 3 {
		reply, err := c.Request(context.Background(), runtime.Out{From: "caller", Target: "chatty", Body: []byte("go")}, runtime.WithTimeout(waitLimit))
		if err != nil {
			t.Fatal(err)
		}
		if string(reply.Body()) != "done at last" {
			t.Fatalf("reply %q", reply.Body())
		}
	}
}
