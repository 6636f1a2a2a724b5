package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// trail records what the hooks did, in order.
type trail struct {
	mu  sync.Mutex
	log []string
}

func (tr *trail) add(format string, args ...any) {
	tr.mu.Lock()
	tr.log = append(tr.log, fmt.Sprintf(format, args...))
	tr.mu.Unlock()
}

func (tr *trail) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.log)
}

// hookTrail is classic hook middleware writing to a trail.
type hookTrail struct {
	name string
	tr   *trail
}

func (h hookTrail) BeforeHandle(context.Context, *runtime.Message) error {
	h.tr.add("%s before", h.name)
	return nil
}

func (h hookTrail) AfterHandle(_ context.Context, _ *runtime.Message, err error, attempt int) {
	h.tr.add("%s after %d err=%v", h.name, attempt, err != nil)
}

type ctxKey struct{}

// interceptor adapts a function to an Interceptor with no-op hooks.
type interceptor struct {
	runtime.MiddlewareDefaults
	f func(c *runtime.Ctx, next func(*runtime.Ctx) error) error
}

func (i interceptor) Intercept(c *runtime.Ctx, next func(*runtime.Ctx) error) error {
	return i.f(c, next)
}

// wrapTrail is a wrapping middleware that also has hooks.
func wrapTrail(name string, tr *trail) runtime.Middleware {
	return interceptor{f: func(c *runtime.Ctx, next func(*runtime.Ctx) error) error {
		tr.add("%s enter %d", name, c.Attempt())
		prev, _ := c.Value(ctxKey{}).(string)
		err := next(c.WithContext(context.WithValue(c, ctxKey{}, prev+name)))
		tr.add("%s exit %d err=%v", name, c.Attempt(), err != nil)
		return err
	}}
}

func TestInterceptorsWrapEveryAttemptOutermostFirstWithHooksInnermost(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	tr := &trail{}
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			v, _ := c.Value(ctxKey{}).(string)
			tr.add("handler %d ctx=%s", c.Attempt(), v)
			return errBoom
		}),
		Middleware: []runtime.Middleware{wrapTrail("a", tr), hookTrail{"h", tr}, wrapTrail("b", tr)},
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
			Retry:          runtime.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Nanosecond},
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	dl := recv(t, dls, "retry exhausted")
	if dl.Capsule.Reason != wire.ReasonRetryExhausted || dl.Capsule.Attempts != 2 {
		t.Fatalf("capsule %+v", dl.Capsule)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a enter 1", "b enter 1", "h before", "handler 1 ctx=ab", "h after 1 err=true", "b exit 1 err=true", "a exit 1 err=true",
		"a enter 2", "b enter 2", "handler 2 ctx=ab", "h after 2 err=true", "b exit 2 err=true", "a exit 2 err=true",
	}
	if got := tr.get(); !slices.Equal(got, want) {
		t.Fatalf("trail\n got %q\nwant %q", got, want)
	}
}

func TestInterceptorSeesABeforeHandleRefusalAndTheMessageIsRejectedWithoutAnAttempt(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	refused := make(chan error, 1)
	outer := interceptor{f: func(c *runtime.Ctx, next func(*runtime.Ctx) error) error {
		err := next(c)
		refused <- err
		return err
	}}
	gate := &countingMiddleware{reject: errors.New("no entry")}
	start(t, log, runtime.ConsumerConfig{
		Agent:      agent,
		Handler:    handlerFunc(func(*runtime.Ctx) error { t.Error("handler ran"); return nil }),
		Middleware: []runtime.Middleware{outer, gate},
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	dl := recv(t, dls, "rejection")
	if dl.Capsule.Reason != wire.ReasonRejected || dl.Capsule.Attempts != 0 || *dl.Capsule.Detail != "no entry" {
		t.Fatalf("capsule %+v", dl.Capsule)
	}
	if err := recv(t, refused, "interceptor result"); err == nil || err.Error() != "no entry" {
		t.Fatalf("interceptor saw %v", err)
	}
}

// observer records every delivery and tags the pipeline's context.
type observer struct {
	runtime.MiddlewareDefaults
	seen chan runtime.Delivery
}

func (*observer) ObserveConsumer(*runtime.Consumer) {}

func (o *observer) ObserveRecord(ctx context.Context, d *runtime.Delivery, next func(context.Context)) {
	next(context.WithValue(ctx, ctxKey{}, "observed"))
	o.seen <- *d
}

func TestConsumerObserverSeesHowEveryRecordEnded(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	obs := &observer{seen: make(chan runtime.Delivery, 16)}
	inCtx := make(chan string, 1)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			if string(c.Message().Body()) == "poison" {
				return errBoom
			}
			v, _ := c.Value(ctxKey{}).(string)
			inCtx <- v
			return nil
		}),
		Middleware: []runtime.Middleware{obs},
		Tuning: runtime.Tuning{
			Retry: runtime.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Nanosecond},
		},
	})
	c := conv()
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "k1"}, "ok")
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "k1"}, "again")
	plain(t, log, wire.Provenance{Conversation: c, Target: "someone-else"}, "not mine")
	plain(t, log, wire.Provenance{Conversation: c}, "poison")
	raw(t, log, wire.PartitionKey(c), nil, []byte("undecodable"))

	if v := recv(t, inCtx, "handler"); v != "observed" {
		t.Fatalf("the handler runs under the observer's context; got %q", v)
	}
	type summary struct {
		Result    runtime.Result
		DroppedBy runtime.DropGate
		Reason    wire.DeadLetterReason
		Attempts  int
		Decoded   bool
		Err       bool
	}
	want := []summary{
		{Result: runtime.ResultHandled, Attempts: 1, Decoded: true},
		{Result: runtime.ResultDropped, DroppedBy: runtime.DropDuplicate, Decoded: true},
		{Result: runtime.ResultSkipped, Decoded: true},
		{Result: runtime.ResultDeadLettered, Reason: wire.ReasonRetryExhausted, Attempts: 2, Decoded: true, Err: true},
		{Result: runtime.ResultDeadLettered, Reason: wire.ReasonDecodeFailed},
	}
	for i, w := range want {
		d := recv(t, obs.seen, "delivery")
		got := summary{d.Result, d.DroppedBy, d.Reason, d.Attempts, d.Message != nil, d.Err != nil}
		if got != w {
			t.Fatalf("delivery %d: %+v, want %+v", i, got, w)
		}
		if d.Topic != topic || d.Group != agent || d.Agent != agent || d.Record == nil || d.Record.Offset != uint64(i) {
			t.Fatalf("delivery %d identifies %s/%s/%s %v", i, d.Topic, d.Group, d.Agent, d.Record)
		}
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

// stampedSend is one publish as headerStamp saw it.
type stampedSend struct {
	topic     string
	positions []runtime.Position
}

// headerStamp is send middleware adding a header to every record.
type headerStamp struct {
	runtime.MiddlewareDefaults
	sends chan stampedSend
}

func (h *headerStamp) InterceptSend(ctx context.Context, topic string, records []runtime.Outgoing, next func(context.Context, []runtime.Outgoing) ([]runtime.Position, error)) ([]runtime.Position, error) {
	for i := range records {
		rec := &records[i]
		rec.Headers = append(rec.Headers[:len(rec.Headers):len(rec.Headers)], wire.Header{Key: "stamp", Value: wire.StringValue(topic)})
	}
	pos, err := next(ctx, records)
	h.sends <- stampedSend{topic: topic, positions: pos}
	return pos, err
}

func TestSendInterceptorStampsEveryPublishOfTheClientAndItsAgents(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	stamp := &headerStamp{sends: make(chan stampedSend, 8)}
	client := runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger(), Middleware: []runtime.Middleware{stamp}})
	startPonger(t, client)
	reply, err := client.Request(context.Background(), runtime.Out{From: sender, Target: agent, Body: []byte("ping")})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := reply.Headers.Get("stamp"); !ok || string(v.Data) != resp {
		t.Fatalf("the reply carries stamp %q, %v", v.Data, ok)
	}
	cmd := readAll(t, log, topic)[0]
	if v, ok := cmd.Headers.Get("stamp"); !ok || string(v.Data) != topic {
		t.Fatalf("the command carries stamp %q, %v", v.Data, ok)
	}
	// The envelope bytes are what the codec makes of the envelope: the
	// header travels beside them.
	env, err := wire.DecodeEnvelope(cmd.Payload)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := env.Marshal()
	if string(again) != string(cmd.Payload) {
		t.Fatal("the payload changed")
	}
	// Two sends went through the interceptor, the command and the reply,
	// in either order: the reply can be published, and reported, before
	// the requester's interceptor reports the command it sent.
	var sent *stampedSend
	for range 2 {
		s := recv(t, stamp.sends, "send")
		if s.topic == topic {
			sent = &s
		}
	}
	if sent == nil || len(sent.positions) != 1 || sent.positions[0] != cmd.Position {
		t.Fatalf("the command's send was %+v, want one position, the command's %v", sent, cmd.Position)
	}
}

// claimingDedup is a two-step deduplicator that fails transiently at first.
type claimingDedup struct {
	mu        sync.Mutex
	failures  int
	claimed   map[string]bool
	completed []string
	forgotten []string
}

func (d *claimingDedup) Observe(_ context.Context, key string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failures > 0 {
		d.failures--
		return false, fmt.Errorf("store down: %w", runtime.ErrTransient)
	}
	if d.claimed[key] {
		return false, nil
	}
	d.claimed[key] = true
	return true, nil
}

func (d *claimingDedup) Complete(_ context.Context, key string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.completed = append(d.completed, key)
	return nil
}

func (d *claimingDedup) Forget(_ context.Context, key string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forgotten = append(d.forgotten, key)
	delete(d.claimed, key)
	return nil
}

func TestTransientDeduplicatorFailureIsRetriedAndHandledOnceThenCompleted(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	dd := &claimingDedup{failures: 2, claimed: map[string]bool{}}
	sink, dls := deadLetters()
	handled := make(chan string, 4)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			if string(c.Message().Body()) == "bad" {
				return runtime.Reject(fmt.Errorf("bad"))
			}
			handled <- string(c.Message().Body())
			return nil
		}),
		Tuning: runtime.Tuning{
			Deduplicator:   dd,
			DeadLetterSink: sink,
		},
	})
	c := conv()
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "a"}, "first")
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "a"}, "dup")
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "b"}, "bad")
	if got := recv(t, handled, "handler"); got != "first" {
		t.Fatalf("handled %q", got)
	}
	recv(t, dls, "rejection")
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-handled:
		t.Fatalf("the duplicate %q was handled", m)
	default:
	}
	dd.mu.Lock()
	defer dd.mu.Unlock()
	want := []string{dedup.Key(sender, "a"), dedup.Key(sender, "b")}
	if !slices.Equal(dd.completed, want) || len(dd.forgotten) != 0 {
		t.Fatalf("completed %q forgotten %q; want completed %q", dd.completed, dd.forgotten, want)
	}
}

// requestTrail wraps requests and records what it saw.
type requestTrail struct {
	runtime.MiddlewareDefaults
	seen chan string
}

func (r *requestTrail) InterceptRequest(ctx context.Context, msg *runtime.Out, next func(context.Context) (*runtime.Message, error)) (*runtime.Message, error) {
	m, err := next(ctx)
	body := ""
	if m != nil {
		body = string(m.Body())
	}
	r.seen <- fmt.Sprintf("%s %s -> %s %v", msg.Topic, msg.Body, body, err)
	return m, err
}

func TestRequestInterceptorWrapsTheCommandAndItsAnswer(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	rt := &requestTrail{seen: make(chan string, 2)}
	client := runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger(), Middleware: []runtime.Middleware{rt}})
	startPonger(t, client)
	if _, err := client.Request(context.Background(), runtime.Out{From: sender, Target: agent, Body: []byte("ping")}); err != nil {
		t.Fatal(err)
	}
	if got := recv(t, rt.seen, "request"); got != topic+" ping -> pong <nil>" {
		t.Fatalf("interceptor saw %q", got)
	}
}

// startPonger runs an agent on client that answers every request "pong".
func startPonger(t *testing.T, client *runtime.Client) {
	t.Helper()
	a, err := client.NewAgent(runtime.AgentConfig{ID: agent, Listen: topic, Respond: resp,
		Handler: handlerFunc(func(c *runtime.Ctx) error { return c.Respond([]byte("pong")) }),
	})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(context.Background())
	t.Cleanup(func() { _ = h.Stop() })
	if err := h.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
}
