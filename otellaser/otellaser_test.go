package otellaser_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/realiggy"
	"github.com/lasergo/laser/otellaser"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// rig is one embedded log and an in-memory trace and metric pipeline;
// each "process" gets its own client and Telemetry exporting there.
type rig struct {
	t      *testing.T
	log    runtime.Transport
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newRig(t *testing.T, topics ...string) *rig {
	t.Helper()
	return newRigOn(t, embedlog.New("laser", embedlog.Config{}), topics...)
}

func newRigOn(t *testing.T, tr runtime.Transport, topics ...string) *rig {
	t.Helper()
	r := &rig{t: t, log: tr, spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	if err := r.log.EnsureTopics(context.Background(), 2, append(topics, runtime.TopicResponses, runtime.TopicDLQ)...); err != nil {
		t.Fatal(err)
	}
	return r
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// process returns a client as one process would build it: two lines of
// tracing and a verifier when given.
func (r *rig) process(verifier runtime.Verifier) *runtime.Client {
	tel := otellaser.New(otellaser.Config{TracerProvider: r.tp, MeterProvider: r.mp})
	return runtime.NewClient(r.log, runtime.ClientConfig{Logger: quiet(), Verifier: verifier, Middleware: []runtime.Middleware{tel}})
}

func (r *rig) agent(client *runtime.Client, id, listen string, cfg runtime.AgentConfig, h func(c *runtime.Ctx) error) {
	r.t.Helper()
	cfg.ID, cfg.Listen, cfg.Respond, cfg.Handler = id, listen, runtime.TopicResponses, runtime.HandlerFunc(h)
	a, err := client.NewAgent(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	handle := a.Start(context.Background())
	r.t.Cleanup(func() { _ = handle.Stop() })
	if err := handle.Ready(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

// ended waits until n spans named name ended and returns every ended span.
func (r *rig) ended(name string, n int) []sdktrace.ReadOnlySpan {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		spans := r.spans.Ended()
		if len(named(spans, name)) >= n {
			return spans
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d spans %q ended, want %d; have %s", len(named(spans, name)), name, n, names(spans))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func names(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString(s.Name() + "; ")
	}
	return b.String()
}

// childOf returns the one span named name whose parent is parent.
func childOf(t *testing.T, spans []sdktrace.ReadOnlySpan, parent trace.SpanContext, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name && s.Parent().SpanID() == parent.SpanID() && s.SpanContext().TraceID() == parent.TraceID() {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans %q under %s, want 1; spans: %s", len(found), name, parent.SpanID(), names(spans))
	}
	return found[0]
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value.String()
		}
	}
	return ""
}

func event(t *testing.T, s sdktrace.ReadOnlySpan, name string) []sdktrace.Event {
	t.Helper()
	var out []sdktrace.Event
	for _, e := range s.Events() {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

func eventAttr(e sdktrace.Event, key attribute.Key) string {
	for _, kv := range e.Attributes {
		if kv.Key == key {
			return kv.Value.String()
		}
	}
	return ""
}

// sum adds the data points of an integer counter whose attributes include want.
func (r *rig) sum(name string, want ...attribute.KeyValue) int64 {
	r.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		r.t.Fatal(err)
	}
	var total int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range data.DataPoints {
					if has(dp.Attributes, want) {
						total += dp.Value
					}
				}
			case metricdata.Gauge[int64]:
				for _, dp := range data.DataPoints {
					if has(dp.Attributes, want) {
						total += dp.Value
					}
				}
			case metricdata.Histogram[float64]:
				for _, dp := range data.DataPoints {
					if has(dp.Attributes, want) {
						total += int64(dp.Count)
					}
				}
			}
		}
	}
	return total
}

func has(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// transports are the logs the request/reply trace is checked on: the
// embedded log, the Iggy transport over the in-process test server, and a
// real Iggy server when LASER_IGGY_ADDR names one (a fresh stream per
// test, deleted after it).
func transports(t *testing.T) map[string]func(t *testing.T) runtime.Transport {
	dial := func(t *testing.T, addr string) runtime.Transport {
		tr, err := iggy.Dial(context.Background(), addr, iggy.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tr.Close() })
		return tr
	}
	return map[string]func(t *testing.T) runtime.Transport{
		"embedlog": func(*testing.T) runtime.Transport { return embedlog.New("laser", embedlog.Config{}) },
		"iggytest": func(t *testing.T) runtime.Transport {
			return dial(t, "iggy://iggy:iggy@"+iggytest.Start(t, iggytest.Config{}).Addr()+"/otel")
		},
		"iggy": func(t *testing.T) runtime.Transport {
			addr := os.Getenv(realiggy.Env)
			if addr == "" {
				t.Skip(realiggy.Env + " is not set; set it to iggy://user:pass@host:port/stream to trace over a real Iggy server")
			}
			return dial(t, realiggy.Stream(t, addr))
		},
	}
}

func TestRequestReplyAcrossTwoAgentsIsOneTrace(t *testing.T) {
	for name, tr := range transports(t) {
		t.Run(name, func(t *testing.T) { requestReplyIsOneTrace(t, tr(t)) })
	}
}

func requestReplyIsOneTrace(t *testing.T, tr runtime.Transport) {
	r := newRigOn(t, tr, "billing.commands", "ledger.commands")
	key := sign.NewKey([32]byte{7})
	reg := sign.NewRegistry()
	if err := reg.Enroll("billing", key.Public()); err != nil {
		t.Fatal(err)
	}
	// The billing process runs billing and ledger; billing asks ledger.
	agents := r.process(nil)
	r.agent(agents, "ledger", "ledger.commands", runtime.AgentConfig{}, func(c *runtime.Ctx) error {
		return c.Respond([]byte("booked " + string(c.Message().Body())))
	})
	r.agent(agents, "billing", "billing.commands", runtime.AgentConfig{SigningKey: key}, func(c *runtime.Ctx) error {
		booked, err := c.Client().Request(c, runtime.Out{Topic: "ledger.commands", Target: "ledger", Body: c.Message().Body()})
		if err != nil {
			return err
		}
		return c.Respond(booked.Body())
	})
	// The caller is another process; it verifies billing's signed reply.
	caller := r.process(reg)
	ctx, root := r.tp.Tracer("test").Start(context.Background(), "checkout")
	reply, err := caller.Request(ctx, runtime.Out{Topic: "billing.commands", From: "shop", Target: "billing", Body: []byte("9.99")})
	root.End()
	if err != nil {
		t.Fatalf("request: %v (a signature broken by the trace headers would fail verification)", err)
	}
	if string(reply.Body()) != "booked 9.99" || reply.VerifiedPrincipal != "billing" {
		t.Fatalf("reply %q from %q", reply.Body(), reply.VerifiedPrincipal)
	}

	r.ended("process ledger.commands", 1)
	r.ended("process billing.commands", 1)
	spans := r.ended("send agent.responses", 2)
	send := childOf(t, spans, root.SpanContext(), "send billing.commands")
	billing := childOf(t, spans, send.SpanContext(), "process billing.commands")
	ask := childOf(t, spans, billing.SpanContext(), "send ledger.commands")
	ledger := childOf(t, spans, ask.SpanContext(), "process ledger.commands")
	childOf(t, spans, ledger.SpanContext(), "send agent.responses")
	answer := childOf(t, spans, billing.SpanContext(), "send agent.responses")

	// A request is one producer span, from its command to its answer.
	if attr(send, "messaging.operation.name") != "request" || attr(ask, "messaging.operation.name") != "request" {
		t.Errorf("request spans' operations %q %q", attr(send, "messaging.operation.name"), attr(ask, "messaging.operation.name"))
	}
	if ev := event(t, send, "laser.reply"); len(ev) != 1 || eventAttr(ev[0], otellaser.KindKey) != "response" || eventAttr(ev[0], otellaser.AgentKey) != "billing" {
		t.Errorf("reply events %+v", ev)
	}
	if send.EndTime().Before(answer.StartTime()) {
		t.Error("the request span ended before its answer was sent")
	}

	if send.SpanKind() != trace.SpanKindProducer || billing.SpanKind() != trace.SpanKindConsumer {
		t.Fatalf("kinds %v %v", send.SpanKind(), billing.SpanKind())
	}
	for k, want := range map[attribute.Key]string{
		"messaging.system":                   "iggy",
		"messaging.operation.type":           "process",
		"messaging.destination.name":         "billing.commands",
		"messaging.consumer.group.name":      "billing",
		"messaging.destination.partition.id": attr(send, "messaging.destination.partition.id"),
		"messaging.iggy.offset":              "0",
		"messaging.message.conversation_id":  attr(send, "messaging.message.conversation_id"),
		"laser.kind":                         "command",
	} {
		if got := attr(billing, k); got != want || got == "" {
			t.Errorf("process span %s = %q, want %q", k, got, want)
		}
	}
	if attr(send, "messaging.operation.type") != "send" {
		t.Errorf("send span operation %q", attr(send, "messaging.operation.type"))
	}
	if billing.Status().Code != codes.Ok {
		t.Errorf("handled span status %v", billing.Status())
	}
	if ev := event(t, billing, "laser.outcome"); len(ev) != 1 || eventAttr(ev[0], otellaser.ResultKey) != "handled" {
		t.Errorf("outcome events %+v", ev)
	}

	// The trace context is a record header beside the AGDX ones; the
	// envelope bytes are the codec's own.
	cmd, err := r.log.ReadRange(context.Background(), "billing.commands", mustPartition(t, send), 0, 1)
	if err != nil || len(cmd) != 1 {
		t.Fatal(err)
	}
	tp, ok := cmd[0].Headers.Get("traceparent")
	if !ok || !strings.Contains(string(tp.Data), send.SpanContext().SpanID().String()) {
		t.Fatalf("traceparent %q, want the send span %s", tp.Data, send.SpanContext().SpanID())
	}
	env, err := wire.DecodeEnvelope(cmd[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := env.Marshal(); string(again) != string(cmd[0].Payload) {
		t.Fatal("the envelope bytes changed")
	}
	if v, ok := cmd[0].Headers.Get(wire.HeaderAgentVersion); !ok || v.Kind != wire.HeaderKindUint32 {
		t.Fatal("agdx.av is gone")
	}

	if n := r.sum("laser.consumer.handled", attribute.String("messaging.destination.name", "billing.commands")); n != 1 {
		t.Errorf("handled on billing.commands = %d", n)
	}
	if n := r.sum("laser.consumer.latency", attribute.String("messaging.destination.name", "ledger.commands")); n != 1 {
		t.Errorf("latency observations on ledger.commands = %d", n)
	}
	if n := r.sum("laser.handler.duration"); n != 2 {
		t.Errorf("handler duration observations = %d, want one per attempt of both agents", n)
	}
}

func mustPartition(t *testing.T, s sdktrace.ReadOnlySpan) uint32 {
	t.Helper()
	switch p := attr(s, "messaging.destination.partition.id"); p {
	case "0":
		return 0
	case "1":
		return 1
	default:
		t.Fatalf("partition %q", p)
		return 0
	}
}

func TestRetryAndDeadLetterAreSpanEventsStatusAndMetrics(t *testing.T) {
	r := newRig(t, "work.commands")
	proc := r.process(nil)
	var calls atomic.Int32
	r.agent(proc, "worker", "work.commands", runtime.AgentConfig{Tuning: runtime.Tuning{Retry: runtime.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Nanosecond}}},
		func(c *runtime.Ctx) error {
			switch string(c.Message().Body()) {
			case "flaky":
				if calls.Add(1) < 3 {
					return errors.New("ledger busy")
				}
				return nil
			case "poison":
				return runtime.Reject(fmt.Errorf("cannot parse %q", c.Message().Body()))
			}
			return nil
		})
	ctx := context.Background()
	if _, err := proc.Send(ctx, runtime.Out{Topic: "work.commands", From: "shop", Target: "worker", Body: []byte("flaky")}); err != nil {
		t.Fatal(err)
	}
	if _, err := proc.Send(ctx, runtime.Out{Topic: "work.commands", From: "shop", Target: "worker", Body: []byte("poison")}); err != nil {
		t.Fatal(err)
	}
	r.ended("process work.commands", 2)
	spans := r.ended("send agent.dlq", 1)
	var flaky, poison sdktrace.ReadOnlySpan
	for _, s := range named(spans, "process work.commands") {
		switch eventAttr(event(t, s, "laser.outcome")[0], otellaser.ResultKey) {
		case "handled":
			flaky = s
		case "dead_lettered":
			poison = s
		}
	}
	if flaky == nil || poison == nil {
		t.Fatalf("outcomes missing: %s", names(spans))
	}
	// The retried message: two failed attempts, then handled on the third.
	attempts := event(t, flaky, "laser.attempt")
	if len(attempts) != 2 || eventAttr(attempts[0], otellaser.AttemptsKey) != "1" || eventAttr(attempts[1], otellaser.AttemptsKey) != "2" ||
		eventAttr(attempts[0], "exception.message") != "ledger busy" || eventAttr(attempts[0], "laser.retryable") != "true" {
		t.Fatalf("attempt events %+v", attempts)
	}
	if got := eventAttr(event(t, flaky, "laser.outcome")[0], otellaser.AttemptsKey); got != "3" || flaky.Status().Code != codes.Ok {
		t.Fatalf("handled after %s attempts, status %v", got, flaky.Status())
	}
	// The dead letter: reason on the outcome, an error status, and the
	// capsule's publish is a child of the message's span.
	out := event(t, poison, "laser.outcome")[0]
	if eventAttr(out, otellaser.ReasonKey) != "rejected" || poison.Status().Code != codes.Error || !strings.Contains(poison.Status().Description, "rejected") {
		t.Fatalf("dead letter outcome %+v status %v", out.Attributes, poison.Status())
	}
	childOf(t, spans, poison.SpanContext(), "send agent.dlq")

	topic := attribute.String("messaging.destination.name", "work.commands")
	if n := r.sum("laser.handler.retries", topic); n != 2 {
		t.Errorf("retries = %d, want 2", n)
	}
	if n := r.sum("laser.consumer.dead_lettered", topic, attribute.String("laser.dead_letter.reason", "rejected")); n != 1 {
		t.Errorf("dead_lettered{rejected} = %d", n)
	}
	if n := r.sum("laser.consumer.handled", topic); n != 1 {
		t.Errorf("handled = %d", n)
	}
	if n := r.sum("laser.handler.duration", topic); n != 4 {
		t.Errorf("handler duration observations = %d, want 4 attempts", n)
	}
}

func TestAMessageWithoutOrWithBadTraceContextHandlesAndStartsATraceAndDropsAreCounted(t *testing.T) {
	r := newRig(t, "work.commands")
	handled := make(chan trace.SpanContext, 4)
	r.agent(r.process(nil), "worker", "work.commands", runtime.AgentConfig{}, func(c *runtime.Ctx) error {
		handled <- trace.SpanContextFromContext(c)
		return nil
	})
	// Published by a process without tracing: no traceparent header.
	bare := runtime.NewClient(r.log, runtime.ClientConfig{Logger: quiet()})
	prov := wire.Provenance{Conversation: wire.IDFromUint128(1, 1), Agent: "shop", IdempotencyKey: "once"}
	for i := 0; i < 2; i++ {
		if _, err := bare.SendPlain(context.Background(), "work.commands", prov, []byte("hi")); err != nil {
			t.Fatal(err)
		}
	}
	// Trace context that is garbage, or not a string header, is ignored.
	for i, bad := range []wire.HeaderValue{wire.StringValue("00-not-a-trace-01"), {Kind: wire.HeaderKindRaw, Data: []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")}} {
		p := wire.Provenance{Conversation: wire.IDFromUint128(1, 2)}
		headers, err := p.Headers()
		if err != nil {
			t.Fatal(err)
		}
		headers = append(headers, wire.Header{Key: "traceparent", Value: bad})
		if _, err := r.log.Publish(context.Background(), "work.commands", runtime.Outgoing{Key: p.PartitionKey(), Headers: headers, Payload: []byte{byte(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	var sc trace.SpanContext
	select {
	case sc = <-handled:
	case <-time.After(10 * time.Second):
		t.Fatal("not handled")
	}
	if !sc.IsValid() {
		t.Fatal("the handler's context carries no span")
	}
	for i := 0; i < 2; i++ {
		select {
		case <-handled:
		case <-time.After(10 * time.Second):
			t.Fatal("a record with bad trace context was not handled")
		}
	}
	spans := r.ended("process work.commands", 4)
	for _, s := range named(spans, "process work.commands") {
		if s.Parent().IsValid() {
			t.Fatalf("a record without trace context must start a trace; parent %v", s.Parent())
		}
	}
	if n := r.sum("laser.consumer.dropped", attribute.String("laser.gate", "duplicate")); n != 1 {
		t.Fatalf("dropped{duplicate} = %d", n)
	}
}

func TestQueueAndLagGaugesSampleARunningConsumer(t *testing.T) {
	r := newRig(t, "work.commands")
	proc := r.process(nil)
	started, release := make(chan string, 4), make(chan struct{})
	r.agent(proc, "worker", "work.commands", runtime.AgentConfig{Tuning: runtime.Tuning{Concurrency: runtime.PerPartition(1)}}, func(c *runtime.Ctx) error {
		started <- string(c.Message().Body())
		if string(c.Message().Body()) == "2" {
			<-release
		}
		return nil
	})
	defer close(release)
	conv := wire.IDFromUint128(1, 9) // one conversation: one partition, in order
	for _, body := range []string{"1", "2", "3", "4"} {
		if _, err := proc.SendPlain(context.Background(), "work.commands", wire.Provenance{Conversation: conv}, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"1", "2"} {
		select {
		case got := <-started:
			if got != want {
				t.Fatalf("started %s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("handler did not start")
		}
	}
	// "1" is done; "2" blocks in its handler, holding its place in the
	// queue with "3" and "4" behind it.
	group := attribute.String("messaging.consumer.group.name", "worker")
	deadline := time.Now().Add(10 * time.Second)
	for r.sum("laser.consumer.queue.records", group) != 3 || r.sum("laser.consumer.lag", group) != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("queue %d records, lag %d; want 3 and 3", r.sum("laser.consumer.queue.records", group), r.sum("laser.consumer.lag", group))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if b := r.sum("laser.consumer.queue.bytes", group); b < 3 {
		t.Fatalf("queued bytes %d", b)
	}
}

func TestARecordWithoutTraceContextStartsANewTraceNotAChildOfTheRunContextsSpan(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tel := otellaser.New(otellaser.Config{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider()})
	// The consumer's Run was started under a span of the application.
	runCtx, run := tp.Tracer("app").Start(context.Background(), "app run")
	defer run.End()
	var inner trace.SpanContext
	tel.ObserveRecord(runCtx, &runtime.Delivery{Topic: "work.commands", Group: "worker", Record: &runtime.Incoming{}, Result: runtime.ResultHandled}, func(ctx context.Context) {
		inner = trace.SpanContextFromContext(ctx)
	})
	process := named(spans.Ended(), "process work.commands")
	if len(process) != 1 {
		t.Fatalf("spans %s", names(spans.Ended()))
	}
	s := process[0]
	if s.Parent().IsValid() {
		t.Fatalf("process span is the child of %v; a record without trace context must start a new trace", s.Parent())
	}
	if s.SpanContext().TraceID() == run.SpanContext().TraceID() {
		t.Fatal("process span joined the run context's trace")
	}
	if !inner.Equal(s.SpanContext()) {
		t.Fatalf("the pipeline runs under %v, want the process span %v", inner, s.SpanContext())
	}
}

func TestCloseUnregistersTheGaugesSoARunningConsumerIsNoLongerSampled(t *testing.T) {
	r := newRig(t, "work.commands")
	tel := otellaser.New(otellaser.Config{TracerProvider: r.tp, MeterProvider: r.mp})
	proc := runtime.NewClient(r.log, runtime.ClientConfig{Logger: quiet(), Middleware: []runtime.Middleware{tel}})
	started, release := make(chan struct{}, 4), make(chan struct{})
	r.agent(proc, "worker", "work.commands", runtime.AgentConfig{Tuning: runtime.Tuning{Concurrency: runtime.PerPartition(1)}}, func(c *runtime.Ctx) error {
		started <- struct{}{}
		if string(c.Message().Body()) == "2" {
			<-release
		}
		return nil
	})
	defer close(release)
	conv := wire.IDFromUint128(1, 10)
	for _, body := range []string{"1", "2", "3"} {
		if _, err := proc.SendPlain(context.Background(), "work.commands", wire.Provenance{Conversation: conv}, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("handler did not start")
		}
	}
	group := attribute.String("messaging.consumer.group.name", "worker")
	deadline := time.Now().Add(10 * time.Second)
	for r.sum("laser.consumer.lag", group) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("lag %d; want 2", r.sum("laser.consumer.lag", group))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tel.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tel.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if n, q := r.sum("laser.consumer.lag", group), r.sum("laser.consumer.queue.records", group); n != 0 || q != 0 {
		t.Fatalf("after Close lag %d, queue %d sampled; want nothing", n, q)
	}
}
