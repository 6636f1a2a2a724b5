// Package otellaser traces and measures laser-go agents with OpenTelemetry.
// Install it once per process, on the client every agent runs on:
//
//	client := runtime.NewClient(tr, runtime.ClientConfig{Middleware: []runtime.Middleware{otellaser.New(otellaser.Config{})}})
//
// Every publish, and every request from the publish of its command to its
// answer, then gets a producer span ("send <topic>") whose W3C trace
// context travels in the record's headers (traceparent, tracestate: record
// headers beside the AGDX ones, so envelope bytes and signatures are
// untouched), and every record a consumer takes gets a consumer span
// ("process <topic>"), the child of the span that sent it, under which the
// gates, the middleware and the handler run. A handler that sends through
// its *runtime.Ctx (Respond, Send, Request, Emit) therefore continues the
// trace, and a request, its handling, the reply and what the handler asked
// of other agents form one trace across processes. A record without trace
// context starts a new trace.
//
// Outcomes are span events ("laser.attempt" per failed attempt,
// "laser.outcome" once) and the span status (an error for a dead letter or
// a record left uncommitted). Metrics, all labelled with topic and group:
// laser.consumer.handled, laser.consumer.dead_lettered (by reason),
// laser.consumer.dropped (by gate), laser.consumer.skipped,
// laser.handler.duration and laser.consumer.latency (broker append to
// done) in seconds, laser.handler.retries, laser.consumer.queue.records and
// laser.consumer.queue.bytes (lanes), laser.consumer.lag (per partition).
// The gauges are sampled by a callback registered with the meter provider;
// Telemetry.Close unregisters it.
package otellaser

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"
	"weak"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/lasergo/laser/otellaser"

// System is the messaging.system attribute value.
const System = "iggy"

// Config configures Telemetry; the zero value uses the global providers.
type Config struct {
	// TracerProvider makes the spans. Default otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics. Default otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator writes and reads the trace context in record headers.
	// Default propagation.TraceContext{} (W3C traceparent and tracestate).
	Propagator propagation.TextMapPropagator
	// Now is the clock of the end-to-end latency. Default time.Now.
	Now func() time.Time
}

// Telemetry is the middleware (install it once: on the client, or in a
// consumer's Middleware, not both, or every span is made twice): a
// runtime.ConsumerObserver (consumer spans, outcome metrics, queue and lag
// gauges), a runtime.Interceptor (attempt events, handler duration,
// retries), a runtime.SendInterceptor (producer spans, trace context
// injection) and a runtime.RequestInterceptor (request spans).
type Telemetry struct {
	runtime.MiddlewareDefaults

	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	now    func() time.Time

	handled, deadLettered, dropped, skipped, retries metric.Int64Counter
	duration, latency                                metric.Float64Histogram

	mu sync.Mutex
	// reg is the gauges' callback, unregistered by Close.
	reg metric.Registration
	// consumers are held weakly: agents build a consumer per start (and
	// one to validate their config), and the ones dropped must not pile up.
	consumers []weak.Pointer[runtime.Consumer]
}

var (
	_ runtime.Interceptor        = (*Telemetry)(nil)
	_ runtime.SendInterceptor    = (*Telemetry)(nil)
	_ runtime.RequestInterceptor = (*Telemetry)(nil)
	_ runtime.ConsumerObserver   = (*Telemetry)(nil)
)

// New returns the middleware. Instruments that the meter provider refuses
// are reported to otel.Handle and replaced by no-ops.
func New(opts Config) *Telemetry {
	if opts.TracerProvider == nil {
		opts.TracerProvider = otel.GetTracerProvider()
	}
	if opts.MeterProvider == nil {
		opts.MeterProvider = otel.GetMeterProvider()
	}
	if opts.Propagator == nil {
		opts.Propagator = propagation.TraceContext{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t := &Telemetry{
		tracer: opts.TracerProvider.Tracer(ScopeName),
		prop:   opts.Propagator,
		now:    opts.Now,
	}
	m := opts.MeterProvider.Meter(ScopeName)
	var errs []error
	counter := func(name, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit("{message}"))
		errs = append(errs, err)
		return c
	}
	seconds := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithDescription(desc), metric.WithUnit("s"))
		errs = append(errs, err)
		return h
	}
	t.handled = counter("laser.consumer.handled", "Messages a handler attempt succeeded for.")
	t.deadLettered = counter("laser.consumer.dead_lettered", "Messages parked in the dead-letter topic, by reason.")
	t.dropped = counter("laser.consumer.dropped", "Messages a gate dropped, by gate (duplicate, fence, replay).")
	t.skipped = counter("laser.consumer.skipped", "Messages targeted at another agent.")
	t.retries = counter("laser.handler.retries", "Handler attempts after the first.")
	t.duration = seconds("laser.handler.duration", "Duration of one handler attempt.")
	t.latency = seconds("laser.consumer.latency", "From the broker's append to the consumer being done with the message.")
	queued, err := m.Int64ObservableGauge("laser.consumer.queue.records", metric.WithDescription("Records waiting in the lanes."), metric.WithUnit("{record}"))
	errs = append(errs, err)
	queuedBytes, err := m.Int64ObservableGauge("laser.consumer.queue.bytes", metric.WithDescription("Bytes of the records waiting in the lanes."), metric.WithUnit("By"))
	errs = append(errs, err)
	lag, err := m.Int64ObservableGauge("laser.consumer.lag", metric.WithDescription("Records a partition holds past the last one the consumer finished."), metric.WithUnit("{record}"))
	errs = append(errs, err)
	t.reg, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return t.observeGauges(ctx, o, queued, queuedBytes, lag)
	}, queued, queuedBytes, lag)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		otel.Handle(err)
	}
	return t
}

// Close unregisters the queue and lag gauges' callback from the meter
// provider and lets go of the consumers it sampled; spans and counters
// keep working. Call it when the Telemetry is no longer used, before its
// meter provider shuts down. Closing twice is harmless.
func (t *Telemetry) Close() error {
	t.mu.Lock()
	reg := t.reg
	t.reg = nil
	clear(t.consumers)
	t.consumers = nil
	t.mu.Unlock()
	if reg == nil {
		return nil
	}
	return reg.Unregister()
}

// ObserveRecord implements runtime.ConsumerObserver: one consumer span per
// record, the child of the trace context its headers carry, or the root of
// a new trace when they carry none (never a child of whatever span the
// consumer's run context holds). When the consumer verifies signatures, a
// record that does not verify starts a new root instead, linked to the
// context it claims without its tracestate: a forged record must not join
// a victim's trace, force its sampling or carry vendor state into it.
func (t *Telemetry) ObserveRecord(ctx context.Context, d *runtime.Delivery, next func(context.Context)) {
	rec := d.Record
	// Extract over an emptied span context, so that only the headers can
	// make the parent valid; other context values stay.
	parent := t.prop.Extract(trace.ContextWithSpanContext(ctx, trace.SpanContext{}), incomingCarrier{h: rec.Headers})
	var links []trace.Link
	if claimed := trace.SpanContextFromContext(parent); claimed.IsValid() && d.Verifier != nil && !verifies(d) {
		links = append(links, trace.Link{SpanContext: claimed.WithTraceState(trace.TraceState{}), Attributes: []attribute.KeyValue{UnverifiedKey.Bool(true)}})
		parent = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	}
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemKey.String(System),
		semconv.MessagingOperationName("process"),
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingDestinationName(d.Topic),
		semconv.MessagingConsumerGroupName(d.Group),
		semconv.MessagingDestinationPartitionID(strconv.FormatUint(uint64(rec.Partition), 10)),
		OffsetKey.Int64(int64(rec.Offset)),
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...), trace.WithLinks(links...)}
	if !trace.SpanContextFromContext(parent).IsValid() {
		opts = append(opts, trace.WithNewRoot())
	}
	ctx, span := t.tracer.Start(parent, "process "+d.Topic, opts...)
	defer span.End()
	next(ctx)

	if m := d.Message; m != nil {
		span.SetAttributes(messageAttributes(m)...)
	}
	labels := metric.WithAttributes(semconv.MessagingDestinationName(d.Topic), semconv.MessagingConsumerGroupName(d.Group))
	outcome := []attribute.KeyValue{ResultKey.String(d.Result.String())}
	switch d.Result {
	case runtime.ResultHandled:
		t.handled.Add(ctx, 1, labels)
		outcome = append(outcome, AttemptsKey.Int(d.Attempts))
		span.SetStatus(codes.Ok, "")
	case runtime.ResultSkipped:
		t.skipped.Add(ctx, 1, labels)
	case runtime.ResultDropped:
		t.dropped.Add(ctx, 1, labels, metric.WithAttributes(GateKey.String(string(d.DroppedBy))))
		outcome = append(outcome, GateKey.String(string(d.DroppedBy)))
	case runtime.ResultDeadLettered:
		reason := d.Reason.String()
		t.deadLettered.Add(ctx, 1, labels, metric.WithAttributes(ReasonKey.String(reason)))
		outcome = append(outcome, ReasonKey.String(reason), AttemptsKey.Int(d.Attempts))
		if d.Err != nil {
			span.RecordError(d.Err)
		}
		span.SetStatus(codes.Error, "dead-lettered: "+reason)
	case runtime.ResultFailed:
		span.RecordError(d.Err)
		span.SetStatus(codes.Error, "left uncommitted: "+d.Err.Error())
	}
	span.AddEvent("laser.outcome", trace.WithAttributes(outcome...))
	if d.Result != runtime.ResultFailed && rec.Timestamp > 0 {
		appended := time.UnixMicro(int64(rec.Timestamp))
		t.latency.Record(ctx, max(t.now().Sub(appended), 0).Seconds(), labels)
	}
}

// verifies reports whether d's record verifies as the consumer's signature
// gate will check it. The gate runs after the span starts, so the record
// is checked here as well: one more decode and signature check per record,
// paid only when both tracing and verification are on.
func verifies(d *runtime.Delivery) bool {
	m, err := runtime.DecodeRecord(d.Topic, d.Record, ^uint64(0))
	if err != nil {
		return false
	}
	_, err = m.Verify(d.Verifier)
	return err == nil
}

// Intercept implements runtime.Interceptor: it times each attempt, counts
// retries and adds a "laser.attempt" event to the record's span for every
// attempt that failed.
func (t *Telemetry) Intercept(c *runtime.Ctx, next func(*runtime.Ctx) error) error {
	start := t.now()
	err := next(c)
	m := c.Message()
	labels := metric.WithAttributes(semconv.MessagingDestinationName(m.Topic))
	t.duration.Record(c, t.now().Sub(start).Seconds(), labels)
	if c.Attempt() > 1 {
		t.retries.Add(c, 1, labels)
	}
	if err != nil {
		trace.SpanFromContext(c).AddEvent("laser.attempt", trace.WithAttributes(
			AttemptsKey.Int(c.Attempt()),
			attribute.Bool("laser.retryable", runtime.IsRetryable(err)),
			semconv.ErrorTypeKey.String(errorType(err)),
			attribute.String("exception.message", err.Error()),
		))
	}
	return err
}

// requestSpanKey marks a context whose span is a request's: the publish of
// the request's command uses that span instead of making its own.
type requestSpanKey struct{}

// InterceptRequest implements runtime.RequestInterceptor: a request is one
// producer span, from the publish of its command to its answer, which is
// recorded as a "laser.reply" event (or the error, as the status).
func (t *Telemetry) InterceptRequest(ctx context.Context, msg *runtime.Out, next func(context.Context) (*runtime.Message, error)) (*runtime.Message, error) {
	ctx, span := t.tracer.Start(ctx, "send "+msg.Topic, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
		semconv.MessagingSystemKey.String(System),
		semconv.MessagingOperationName("request"),
		semconv.MessagingOperationTypeSend,
		semconv.MessagingDestinationName(msg.Topic),
	))
	defer span.End()
	m, err := next(context.WithValue(ctx, requestSpanKey{}, span))
	if m != nil {
		span.AddEvent("laser.reply", trace.WithAttributes(
			KindKey.String(string(m.Kind())),
			AgentKey.String(m.Provenance.Agent),
			semconv.MessagingDestinationName(m.Topic),
			OffsetKey.Int64(int64(m.Position.Offset)),
		))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return m, err
}

// InterceptSend implements runtime.SendInterceptor: one producer span per
// publish (a request's own, for the command of a request), its context
// injected into every record's headers.
func (t *Telemetry) InterceptSend(ctx context.Context, topic string, records []runtime.Outgoing, next func(context.Context, []runtime.Outgoing) ([]runtime.Position, error)) ([]runtime.Position, error) {
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemKey.String(System),
		semconv.MessagingOperationName("send"),
		semconv.MessagingOperationTypeSend,
		semconv.MessagingDestinationName(topic),
	}
	if len(records) > 1 {
		attrs = append(attrs, semconv.MessagingBatchMessageCount(len(records)))
	}
	if len(records) == 1 && records[0].Key != "" {
		attrs = append(attrs, semconv.MessagingMessageConversationID(records[0].Key))
	}
	span, ok := ctx.Value(requestSpanKey{}).(trace.Span)
	if ok && span == trace.SpanFromContext(ctx) {
		span.SetAttributes(attrs[4:]...) // keep the request's operation name
		// Publishes made further down (by whoever handles this context
		// next) get spans of their own.
		ctx = context.WithValue(ctx, requestSpanKey{}, nil)
	} else {
		ctx, span = t.tracer.Start(ctx, "send "+topic, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
		defer span.End()
	}
	for i := range records {
		rec := &records[i]
		// The caller owns the header slice: inject into a copy.
		h := make(wire.Headers, len(rec.Headers), len(rec.Headers)+2)
		copy(h, rec.Headers)
		t.prop.Inject(ctx, carrier{Headers: &h})
		rec.Headers = h
	}
	pos, err := next(ctx, records)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return pos, err
	}
	if len(pos) == 1 {
		p := pos[0]
		span.SetAttributes(semconv.MessagingDestinationPartitionID(strconv.FormatUint(uint64(p.Partition), 10)), OffsetKey.Int64(int64(p.Offset)))
	}
	return pos, nil
}

// ObserveConsumer implements runtime.ConsumerObserver: the consumer's
// queue and lag are sampled whenever metrics are collected while it runs.
// A Telemetry that was closed samples nothing more.
func (t *Telemetry) ObserveConsumer(c *runtime.Consumer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reg == nil {
		return
	}
	// Pruned here too, not only when metrics are collected: without a
	// reader the list would grow with every consumer an agent builds.
	t.pruneLocked()
	t.consumers = append(t.consumers, weak.Make(c))
}

// pruneLocked drops the consumers already collected and returns the live
// ones; t.mu is held.
func (t *Telemetry) pruneLocked() []*runtime.Consumer {
	var consumers []*runtime.Consumer
	live := t.consumers[:0]
	for _, w := range t.consumers {
		if c := w.Value(); c != nil {
			consumers = append(consumers, c)
			live = append(live, w)
		}
	}
	clear(t.consumers[len(live):])
	t.consumers = live
	return consumers
}

func (t *Telemetry) observeGauges(ctx context.Context, o metric.Observer, queued, queuedBytes, lag metric.Int64ObservableGauge) error {
	t.mu.Lock()
	consumers := t.pruneLocked()
	t.mu.Unlock()
	var errs []error
	for _, c := range consumers {
		if !c.Running() {
			continue
		}
		labels := metric.WithAttributes(semconv.MessagingDestinationName(c.Topic()), semconv.MessagingConsumerGroupName(c.Group()))
		records, bytes := c.Queued()
		o.ObserveInt64(queued, records, labels)
		o.ObserveInt64(queuedBytes, bytes, labels)
		behind, err := c.Lag(ctx)
		errs = append(errs, err)
		for p, n := range behind {
			o.ObserveInt64(lag, int64(n), labels, metric.WithAttributes(semconv.MessagingDestinationPartitionID(strconv.FormatUint(uint64(p), 10))))
		}
	}
	return errors.Join(errs...)
}

// Attribute keys of laser's own span attributes, events and metric labels.
const (
	OffsetKey   = attribute.Key("messaging.iggy.offset")
	ResultKey   = attribute.Key("laser.result")
	GateKey     = attribute.Key("laser.gate")
	ReasonKey   = attribute.Key("laser.dead_letter.reason")
	AttemptsKey = attribute.Key("laser.attempts")
	KindKey     = attribute.Key("laser.kind")
	AgentKey    = attribute.Key("laser.source_agent")
	// UnverifiedKey marks the link to the trace context a record that
	// failed verification claimed.
	UnverifiedKey = attribute.Key("laser.unverified")
)

// messageAttributes describes a decoded message on its span.
func messageAttributes(m *runtime.Message) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.MessagingMessageConversationID(m.Provenance.Conversation.String()),
		semconv.GenAIConversationID(m.Provenance.Conversation.String()),
	}
	if env := m.Envelope; env != nil {
		attrs = append(attrs, KindKey.String(string(env.Kind)))
		if env.Record != nil {
			attrs = append(attrs, semconv.MessagingMessageID(env.Record.String()))
		}
	}
	if op := m.Operation(); op != "" {
		attrs = append(attrs, attribute.String("laser.operation", op))
	}
	if a := m.Provenance.Agent; a != "" {
		attrs = append(attrs, AgentKey.String(a))
	}
	return attrs
}

// errorType names an error for error.type: the runtime's code when it has
// one, else "_OTHER".
func errorType(err error) string {
	if re, ok := errors.AsType[*runtime.Error](err); ok {
		return re.Code.String()
	}
	return "_OTHER"
}

// carrier adapts record headers to propagation.TextMapCarrier: string
// headers only, so typed AGDX headers are never read or overwritten.
type carrier struct{ Headers *wire.Headers }

// Get returns the string header key, or "".
func (c carrier) Get(key string) string {
	v, ok := c.Headers.Get(key)
	if !ok || v.Kind != wire.HeaderKindString {
		return ""
	}
	return string(v.Data)
}

// Set sets the string header key.
func (c carrier) Set(key, value string) { c.Headers.Set(key, wire.StringValue(value)) }

// Keys lists the string headers.
func (c carrier) Keys() []string {
	keys := make([]string, 0, len(*c.Headers))
	for _, h := range *c.Headers {
		if h.Value.Kind == wire.HeaderKindString {
			keys = append(keys, h.Key)
		}
	}
	return keys
}

// incomingCarrier reads a polled record's headers in place for
// propagation.TextMapCarrier: string headers only, and nothing is ever set
// (extraction only reads).
type incomingCarrier struct{ h wire.EncodedHeaders }

// Get returns the string header key, or "".
func (c incomingCarrier) Get(key string) string {
	v, ok := c.h.Get(key)
	if !ok || v.Kind != wire.HeaderKindString {
		return ""
	}
	return string(v.Data)
}

// Set does nothing: a polled record's headers are not written.
func (incomingCarrier) Set(string, string) {}

// Keys lists the string headers.
func (c incomingCarrier) Keys() []string {
	var keys []string
	for k, v := range c.h.All() {
		if v.Kind == wire.HeaderKindString {
			keys = append(keys, string([]byte(k)))
		}
	}
	return keys
}
