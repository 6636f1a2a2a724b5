package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Handler handles one message. Returning nil marks it handled; an error is
// retried when IsRetryable says so, otherwise the message is dead-lettered.
type Handler interface {
	Handle(c *Ctx) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(c *Ctx) error

// Handle calls f.
func (f HandlerFunc) Handle(c *Ctx) error { return f(c) }

// Verifier checks an envelope's signature against the headers observed on
// its record at the broker's timestamp; *sign.Registry implements it.
//
// A Verifier that decides which envelope sources a verified principal may
// sign for is also a SourceChecker (*sign.Registry is); without it every
// source is bound to the principal of the same name.
type Verifier interface {
	VerifyObserved(env *wire.Envelope, observed wire.SignatureContext, atMicros uint64) (sign.Verified, error)
}

// Concurrency says how the consumer schedules messages: Serial,
// PerPartition(n) or PerConversation(n).
type Concurrency struct {
	// Lanes is the most partitions handled concurrently, each in order on
	// a lane of its own; records of partitions beyond the cap are handled
	// inline by the poller. Zero means Serial: one message at a time
	// overall, on the poller.
	Lanes int
	// Handlers is the most handlers PerConversation runs at once, each
	// conversation (or OrderedBy key) in order; it excludes Lanes.
	Handlers int
	// key, for PerConversation, orders records by another key than the
	// conversation (see OrderedBy); a pointer keeps Concurrency comparable.
	key *scheduleKey
}

// PerPartition runs up to lanes partitions concurrently, each strictly in order.
func PerPartition(lanes int) Concurrency { return Concurrency{Lanes: max(lanes, 1)} }

const (
	// replayWindow is how many verified record ids are remembered to refuse
	// a replay of signed bytes (a signature binds no log position).
	replayWindow = 16_384
	// maxPollErrors is how many consecutive poll failures stop the consumer.
	maxPollErrors = 10
	// maxWarmPartitions bounds the warm-up read against absurd partition counts.
	maxWarmPartitions = 1024
)

// ConsumerConfig configures a reliable consumer: who consumes what (Topic,
// Group, Agent, Handler, RespondTopic), the client it runs on, and its
// Tuning. Topic, Group and Handler are required; every other field has the
// documented default.
type ConsumerConfig struct {
	Topic string // topic to consume
	Group string // consumer group; replicas of one agent share it
	// Agent is the consuming agent's id: messages targeted at another agent
	// are skipped, and acks and replies are sent from it. Optional.
	Agent   string
	Handler Handler
	// RespondTopic is where ctx.Respond and ack-on-pickup statuses go. Optional.
	RespondTopic string
	// Client publishes dead letters, acks and replies, serves ctx.Request,
	// and lends the consumer its clock, id source and logger. Default:
	// NewClient(t, ClientConfig{}), the system clock, ULIDs and slog.Default().
	Client *Client
	// EffectGate, when set, governs the effects of the handler in place of the
	// client's gate; Claims are what the handler declares about them.
	EffectGate EffectGate
	Claims     effect.Claims
	// Verifier, when set, makes signatures mandatory: unsigned or unverified
	// messages are dead-lettered as rejected, and so are messages whose
	// source is not the signing principal (see SourceChecker), signed for
	// another topic or outside the freshness bound (Tuning.Binding). It also
	// warms the replay window from the consumed tail at start, as WarmDedup
	// does.
	Verifier Verifier
	// SigningKey signs acks and AGDX responses sent from handlers.
	SigningKey *sign.Key
	// Middleware hooks run around every dispatch, in order, after the
	// client's (ClientConfig.Middleware).
	Middleware []Middleware
	// Tuning holds the knobs of the pipeline; the zero value is the default.
	Tuning
}

// Tuning holds how a consumer runs, as opposed to what it consumes: an
// agent takes the same knobs (AgentConfig.Tuning) and honours every one.
// Each zero field means its documented default.
type Tuning struct {
	// DeadLetterTopic receives dead-letter capsules. Default TopicDLQ.
	DeadLetterTopic string
	// Concurrency is Serial (default), PerPartition(n) or PerConversation(n).
	Concurrency Concurrency
	// MaxQueuedRecords bounds records queued or running across all keys
	// (global: under Serial and PerPartition a full bound stops intake for
	// every partition; PerConversation lets one conversation hold a quarter
	// of it and reads the rest of it from the log again later). Default 4096.
	MaxQueuedRecords int
	// MaxQueuedBytes bounds payload and header bytes queued across all keys.
	// Default 64 MiB.
	MaxQueuedBytes int
	// PollInterval is the wait after an empty poll. Default 10 ms.
	PollInterval time.Duration
	// PollBatch is the most records fetched per poll. Default 100.
	PollBatch int
	// CommitInterval is the least time between two commit rounds: handled
	// offsets are stored in the background at most once per interval (the
	// first round after a quiet spell goes at once), and always before the
	// member leaves. On Iggy a commit holds the member's connection for a
	// round trip that the next poll waits behind, so committing every batch
	// costs throughput; a crash redelivers about one interval of handled
	// records more (at-least-once; dedup drops what carries a key).
	// Default 10 ms.
	CommitInterval time.Duration
	// ShutdownGrace bounds the drain of a graceful stop; past it Run returns
	// CodeTimeout without leaving the group. Default 30 s.
	ShutdownGrace time.Duration
	// Retry is the handler retry policy. Zero fields take the defaults (5
	// attempts, 200 ms base delay): use MaxAttempts 1 to run once, and a
	// tiny BaseDelay such as time.Nanosecond to retry without waiting.
	Retry RetryPolicy
	// DedupWindow is the size of the default in-memory window. Default 10,000.
	DedupWindow int
	// Deduplicator replaces the in-memory window. Optional.
	Deduplicator dedup.Deduplicator
	// WarmDedup replays each partition up to the group's stored offset into
	// the dedup window before the consumer reports ready. Default off.
	WarmDedup bool
	// UnderstoodFeatures are the must-understand bits this consumer
	// implements; envelopes requiring others are dead-lettered. Default 0.
	UnderstoodFeatures uint64
	// AckOnPickup emits a Working task status for each AGDX command it takes,
	// before middleware and handler run. Needs Agent and RespondTopic.
	AckOnPickup bool
	// DeadLetterSink is told of every dead letter and its publish result,
	// so an operator can alert on poison messages without grepping logs.
	DeadLetterSink func(ctx context.Context, dl DeadLetter)
	// Binding is how a verified message's signed destination topic and
	// issued-at are checked. Default: checked when present, 5 minutes.
	Binding sign.BindingPolicy
}

// Consumer turns at-least-once delivery into safe handling: decode, target
// filter, signature and replay gate, fence gate, dedup, deadline,
// ack-on-pickup, middleware, handler with retry, dead-letter; offsets are
// committed only once a message was handled, skipped or parked.
type Consumer struct {
	cfg  ConsumerConfig
	t    Transport
	prod *producer
	// client is what Ctx.Client hands a handler: cfg.Client, bound to the
	// agent's gate and claims when it has its own (see Client.bound).
	client *Client
	dedup  dedup.Deduplicator
	// batch is dedup when it marks keys in batches (see BatchDeduplicator).
	batch  dedup.BatchDeduplicator
	fences *fenceGate
	clock  clock.Clock
	ids    clock.IDSource
	log    *slog.Logger

	replay *replayGuard
	// gates are the gates of gateSteps that run under cfg, in order.
	gates []*gateStep

	// running is set while a Run's loop is alive, which can outlast Run
	// itself when a handler ignores the cancellation of its context.
	running atomic.Bool

	streamID, topicID uint32

	// hooks holds the middleware chain and observers (see observe.go).
	hooks consumerHooks
}

// NewConsumer validates cfg, fills in its defaults and returns a consumer
// over t; nothing touches the transport until Run.
func NewConsumer(t Transport, cfg ConsumerConfig) (*Consumer, error) {
	if t == nil {
		return nil, &Error{Code: CodeConfig, Msg: "consumer needs a transport"}
	}
	switch {
	case cfg.Topic == "":
		return nil, &Error{Code: CodeConfig, Msg: "consumer needs a topic"}
	case cfg.Group == "":
		return nil, &Error{Code: CodeConfig, Msg: "consumer needs a group"}
	case cfg.Handler == nil:
		return nil, &Error{Code: CodeConfig, Msg: "consumer needs a handler"}
	}
	if cfg.Concurrency.Lanes > 0 && cfg.Concurrency.Handlers > 0 {
		return nil, &Error{Code: CodeConfig, Msg: "consumer concurrency sets both Lanes and Handlers; choose PerPartition or PerConversation"}
	}
	if cfg.Agent != "" {
		if _, err := parseAgentID(cfg.Agent); err != nil {
			return nil, &Error{Code: CodeConfig, Msg: "consumer agent id", Err: err}
		}
	}
	if _, err := parseAgentID(cfg.Group); err != nil { // a group name follows the agent id rules
		return nil, &Error{Code: CodeConfig, Msg: "consumer group name", Err: err}
	}
	if cfg.DeadLetterTopic == "" {
		cfg.DeadLetterTopic = TopicDLQ
	}
	orDefault(&cfg.MaxQueuedRecords, DefaultMaxQueuedRecords)
	orDefault(&cfg.MaxQueuedBytes, DefaultMaxQueuedBytes)
	orDefault(&cfg.PollInterval, DefaultPollInterval)
	orDefault(&cfg.CommitInterval, DefaultCommitInterval)
	orDefault(&cfg.PollBatch, DefaultPollBatch)
	orDefault(&cfg.ShutdownGrace, DefaultShutdownGrace)
	orDefault(&cfg.Retry.MaxAttempts, DefaultRetryPolicy.MaxAttempts)
	orDefault(&cfg.Retry.BaseDelay, DefaultRetryPolicy.BaseDelay)
	orDefault(&cfg.DedupWindow, dedup.DefaultWindow)
	if cfg.DedupWindow > dedup.MaxWindow {
		return nil, &Error{Code: CodeConfig, Msg: fmt.Sprintf("DedupWindow of %d keys is more than the in-memory window holds (%d); use a durable dedup.Deduplicator", cfg.DedupWindow, dedup.MaxWindow)}
	}
	if cfg.Client == nil {
		cfg.Client = NewClient(t, ClientConfig{})
	}
	log := cfg.Client.log.With("group", cfg.Group, "topic", cfg.Topic)
	if cfg.Agent != "" {
		log = log.With("agent", cfg.Agent)
	}
	dd := cfg.Deduplicator
	if dd == nil {
		dd = dedup.NewSlidingWindow(cfg.DedupWindow)
	}
	c := &Consumer{
		cfg:    cfg,
		t:      t,
		prod:   cfg.Client.prod,
		dedup:  dd,
		fences: newFenceGate(),
		clock:  cfg.Client.Clock(),
		ids:    cfg.Client.IDs(),
		log:    log,
		replay: newReplayGuard(replayWindow),
	}
	c.client = cfg.Client
	if cfg.EffectGate != nil || cfg.Claims != (effect.Claims{}) {
		c.client = cfg.Client.bound(cfg.EffectGate, cfg.Claims)
	}
	c.batch, _ = dd.(dedup.BatchDeduplicator)
	c.gates = gatesOn(c)
	c.installHooks()
	return c, nil
}

// orDefault sets *v to def when it is zero or negative: a knob's "unset".
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Run joins the group, warms dedup when asked, calls ready (may be nil) and
// consumes until stop is closed or ctx is done.
//
// Closing stop is the graceful path: polling stops, in-flight messages
// finish within ShutdownGrace, their offsets are committed up to the
// watermark (queued records stay for the next owner), the member leaves its
// group and Run returns nil; if the grace runs out Run returns a CodeTimeout
// error and does not leave, so no offset
// moves past unhandled work. Cancelling ctx is the hard stop: Run returns at
// once, no further record is handled (a handler already running sees its
// context cancelled), nothing unfinished is committed, and the group is not
// left. A nil stop never fires.
//
// On both a hard stop and an expired grace, records handled before it are
// committed (within a bound of 5 s of their own), and the membership is
// dropped only once the last handler returned: a handler that ignores its
// cancellation keeps its partition, so no other member handles the same
// record at the same time. Should it finish after all, its record is
// committed too. Run waits a second for such a handler, then returns.
//
// Run may be called again once it returned and its last handler finished
// (until then it fails with CodeConfig), and each call starts like a
// restarted process: the in-memory dedup and replay windows begin empty
// (a Deduplicator from the config is kept).
func (c *Consumer) Run(ctx context.Context, ready func(), stop <-chan struct{}) error {
	// A Run that returned on a hard stop or an expired grace may still be
	// waiting for a handler that ignores its context; a second Run must not
	// share the consumer's state with it.
	if !c.running.CompareAndSwap(false, true) {
		return &Error{Code: CodeConfig, Msg: "consumer is still running: a previous Run has a handler that has not returned yet"}
	}
	// A record the last Run left uncommitted (its dead-letter publish
	// failed, or its handler was cut off) already marked its idempotency
	// key and record id; with the old windows its redelivery would be
	// dropped as a duplicate or a replay and be neither handled nor parked.
	if c.cfg.Deduplicator == nil {
		c.dedup = dedup.NewSlidingWindow(c.cfg.DedupWindow)
	}
	c.replay.reset(replayWindow)

	sub, err := c.t.Join(ctx, c.cfg.Topic, c.cfg.Group)
	if err != nil {
		c.running.Store(false)
		return fmt.Errorf("join group %q on %s: %w", c.cfg.Group, c.cfg.Topic, err)
	}
	if c.cfg.WarmDedup || c.cfg.Verifier != nil {
		if err := c.warmDedup(ctx); err != nil {
			_ = sub.Close()
			c.running.Store(false)
			return fmt.Errorf("warm dedup: %w", err)
		}
	}
	if ready != nil {
		ready()
	}
	if c.streamID, c.topicID, err = c.t.TopicIDs(ctx, c.cfg.Topic); err != nil {
		// The partition and offset still locate the record within its topic.
		c.log.Warn("cannot resolve numeric stream and topic ids; dead-letter capsules carry 0 for them", "error", err)
	}
	s := &session{c: c, sub: sub, stop: stop}
	s.workCtx, s.cancelWork = context.WithCancel(ctx)
	defer s.cancelWork()
	return s.schedule(ctx)
}

// outcome is what the pipeline did with a message; all of them let the
// offset commit.
type outcome uint8

const (
	handled outcome = iota
	skipped
	dropped
	parked
)

// pipeline runs one decoded record through the gates and the handler. d,
// when observers watch, hears what became of the record.
func (c *Consumer) pipeline(ctx context.Context, rec *Incoming, dec decodedRecord, d *Delivery) (outcome, error) {
	// After a hard stop or an expired grace nothing more is handled: the
	// record stays uncommitted for whoever owns the partition next.
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m, err := dec.m, dec.err
	if err != nil {
		return parked, c.deadLetterUndecodable(ctx, rec, &Error{Code: CodeCodec, Msg: "decode", Err: err})
	}
	d.decoded(m)

	if v := c.runGates(ctx, m); !v.passed() {
		switch v.o {
		case dropped:
			d.droppedBy(v.gate)
		case parked:
			return parked, c.deadLetter(ctx, m, v.reason, 0, v.detail, v.err)
		}
		return v.o, nil
	}

	// Dedup marks the key before handling: a duplicate is dropped even if
	// the original later ends in the dead-letter topic.
	var marked dedupMark
	var claims *claimSet
	if key := m.Provenance.IdempotencyKey; key != "" {
		if c.batch != nil {
			claims = claimsFrom(ctx)
		}
		var fresh bool
		marked, fresh, err = c.markKey(ctx, claims, c.senderScope(m), key)
		if err != nil {
			return 0, fmt.Errorf("dedup: %w", err)
		}
		if !fresh {
			c.log.Debug("dropping duplicate message", "idempotency_key", key, "source", m.Position.String())
			d.droppedBy(DropDuplicate)
			return dropped, nil
		}
	}
	o, err := c.settle(ctx, m)
	if err != nil {
		c.unmark(ctx, m, marked)
		return o, err
	}
	if err := c.completeKey(ctx, claims, marked.key); err != nil {
		return 0, fmt.Errorf("dedup: %w", err)
	}
	return o, nil
}

// settle takes a message that passed every gate through the deadline,
// ack, middleware and handler.
func (c *Consumer) settle(ctx context.Context, m *Message) (outcome, error) {
	if d := m.Provenance.Deadline; d != nil && micros(c.clock.Now()) > *d {
		return parked, c.deadLetter(ctx, m, wire.ReasonDeadlineExceeded, 0, "message past its deadline", nil)
	}

	if c.cfg.AckOnPickup {
		c.ackPickup(ctx, m)
	}

	m.hctx = Ctx{Context: ctx, msg: m, c: c}
	return c.handle(ctx, &m.hctx, m)
}

// unmark takes back what the gates recorded for a message that ended
// neither handled nor parked, so its redelivery is treated as new: the
// signed record id, and the idempotency key when the Deduplicator can
// forget.
func (c *Consumer) unmark(ctx context.Context, m *Message, marked dedupMark) {
	if c.cfg.Verifier != nil && m.Envelope != nil && m.Envelope.Record != nil {
		c.replay.forget(*m.Envelope.Record)
	}
	if marked.window != nil {
		marked.window.Unmark(marked.hash)
		return
	}
	if marked.key == "" {
		return
	}
	if f, ok := c.dedup.(dedup.Forgetter); ok {
		if err := f.Forget(context.WithoutCancel(ctx), marked.key); err != nil {
			c.log.Warn("cannot forget an idempotency key; its redelivery may be dropped", "key", marked.key, "error", err)
		}
	}
}

// ackPickup tells a contract caller that its command was taken in time. A
// failure is only logged: the command is still handled.
func (c *Consumer) ackPickup(ctx context.Context, m *Message) {
	env := m.Envelope
	if c.cfg.Agent == "" || c.cfg.RespondTopic == "" || env == nil || env.Kind != wire.KindCommand || env.Correlation == nil {
		return
	}
	state, corr := wire.TaskWorking, *env.Correlation
	ack := &outgoing{kind: wire.KindStatus, from: c.cfg.Agent, who: "ack sender", conversation: env.Conversation, correlation: &corr,
		state: &state, spec: sendSpec{operation: wire.OperationTask}, ct: wire.ContentRaw, key: c.cfg.SigningKey}
	if _, _, err := c.cfg.Client.post(ctx, c.cfg.RespondTopic, ack); err != nil {
		c.log.Warn("ack-on-pickup failed", "source", m.Position.String(), "error", err)
	}
}

// handle runs the handler with retries and dead-letters what cannot succeed.
func (c *Consumer) handle(ctx context.Context, hctx *Ctx, m *Message) (outcome, error) {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		hctx.attempt = attempt
		err := c.call(hctx)
		if err == nil {
			return handled, nil
		}
		// A BeforeHandle refusal: the handler never ran, no attempt counted.
		if refused, ok := errors.AsType[*beforeHandleError](err); ok {
			return parked, c.deadLetter(ctx, m, wire.ReasonRejected, 0, classify(refused.err).detail, refused.err)
		}
		// A hard stop cancels the handler; that is not the message's fault,
		// so it is neither retried nor dead-lettered, and stays uncommitted.
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		f := classify(err)
		if f.retryable && m.streamed.Load() {
			// Part of the answer is already streamed: a rerun would stream
			// it again on a new channel that the caller does not read.
			f.retryable = false
		}
		if !f.retryable {
			return parked, c.deadLetter(ctx, m, wire.ReasonRejected, attempt, f.detail, err)
		}
		if attempt >= c.cfg.Retry.MaxAttempts {
			return parked, c.deadLetter(ctx, m, wire.ReasonRetryExhausted, attempt, f.detail, err)
		}
		c.log.Warn("handler failed, retrying", "source", m.Position.String(), "attempt", attempt, "error", err)
		if err := c.retryWait(ctx, c.cfg.Retry.Delay(attempt-1)); err != nil {
			return 0, err
		}
	}
}

// call runs one attempt through the middleware chain and the handler,
// turning a panic into a retryable error so a bad message never crashes
// the process.
func (c *Consumer) call(hctx *Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			stack := stackTrace()
			c.log.Error("handler panicked", "source", hctx.msg.Position.String(), "panic", r, "stack", stack)
			err = &Error{Code: CodeHandler, Msg: "handler panicked", Err: fmt.Errorf("%v", r)}
		}
	}()
	return c.hooks.chain(hctx)
}
