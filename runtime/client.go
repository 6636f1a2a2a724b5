package runtime

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/effect"
)

// ClientConfig configures a Client; the zero value is usable.
type ClientConfig struct {
	// Clock drives timeouts, deadlines and expiries. Default clock.System.
	Clock clock.Clock
	// IDs mints records, conversations and correlations. Default ULIDSource.
	IDs clock.IDSource
	// Logger receives the client's logs. Default slog.Default().
	Logger *slog.Logger
	// Verifier, when set, makes replies count only when they are AGDX
	// envelopes whose signature verifies against their record's headers.
	Verifier Verifier
	// PublishAttempts is how often a publish is tried when the transport
	// reports a transient error. Default 4.
	PublishAttempts int
	// PublishBackoff is the wait after the first transient publish failure,
	// doubled after each further one. Default 50 ms.
	PublishBackoff time.Duration
	// ReplyPollInterval is how long a reply reader waits after a pass that
	// found nothing. Default 5 ms.
	ReplyPollInterval time.Duration
	// Middleware is installed process-wide: every consumer running on this
	// client (agents included) runs it before its own Tuning
	// Middleware, and the ones implementing SendInterceptor wrap every
	// publish of the client. Tracing goes here. Default none.
	Middleware []Middleware
	// EffectGate decides before every effect of the client and of the agents on
	// it, unless an agent has a gate of its own (AgentConfig.EffectGate); package
	// govern builds one from a policy. Default none: every effect runs.
	EffectGate EffectGate
}

// Client is a process's handle on a transport: it publishes, owns the reply
// readers that request/reply and contracts wait on, and builds agents.
// Several agents and callers share one Client; it is safe for concurrent use.
type Client struct {
	t Transport
	// governed is t as Transport hands it out.
	governed *governedTransport
	prod     *producer
	opts     ClientConfig
	log      *slog.Logger

	// clientState is shared by a client and the views a handler's Ctx
	// hands out (see bound).
	*clientState
}

// clientState is what a client and its views share.
type clientState struct {
	mu     sync.Mutex
	hubs   map[string]*replyHub
	closed bool
	// running holds the ids of the agents started on this client and not
	// yet stopped: one agent per id (see Agent.Start).
	running map[string]bool
}

// NewClient returns a client over t. A client over another client's
// Transport publishes through the transport underneath and stays governed
// as that client is: its gate (a handler's view: its agent's) admits every
// effect after the gate opts sets, so no new client lifts a gate.
func NewClient(t Transport, opts ClientConfig) *Client {
	var claim effect.Claims
	if g, ok := t.(*governedTransport); ok {
		t = g.t
		claim = g.c.prod.claim
		switch parent := g.c.opts.EffectGate; {
		case parent == nil:
		case opts.EffectGate == nil:
			opts.EffectGate = parent
		default:
			opts.EffectGate = &bothGates{first: opts.EffectGate, then: parent, thenClient: g.c}
		}
	}
	if opts.Clock == nil {
		opts.Clock = clock.System{}
	}
	if opts.IDs == nil {
		opts.IDs = clock.ULIDSource{Clock: opts.Clock}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ReplyPollInterval <= 0 {
		opts.ReplyPollInterval = 5 * time.Millisecond
	}
	po := producerConfig{attempts: opts.PublishAttempts, backoff: opts.PublishBackoff, interceptors: sendInterceptors(nil, opts.Middleware)}
	c := &Client{t: t, prod: newProducer(t, po, opts.Clock, opts.IDs, opts.Logger), opts: opts, log: opts.Logger,
		clientState: &clientState{hubs: make(map[string]*replyHub)}}
	c.prod.gate, c.prod.claim, c.prod.client = opts.EffectGate, claim, c
	c.governed = &governedTransport{t: t, c: c}
	return c
}

// bound returns a view of c governed by gate (c's own when nil) and claim
// under every context, not only under a handler's Ctx: what Ctx.Client
// hands a handler whose agent has a gate or claims of its own, so a
// publish under context.Background(), through Publish or Transport, is
// governed as the agent's. The view shares c's reply readers and agents.
func (c *Client) bound(gate EffectGate, claim effect.Claims) *Client {
	v := &Client{t: c.t, opts: c.opts, log: c.log, clientState: c.clientState}
	if gate != nil {
		v.opts.EffectGate = gate
	}
	prod := *c.prod
	prod.gate, prod.claim, prod.client = v.opts.EffectGate, claim, v
	v.prod = &prod
	v.governed = &governedTransport{t: c.t, c: v}
	return v
}

// bothGates admits an effect through first, then through then (the gate
// of the client whose transport a new client was built over), so the
// parent's gate sees what would be published and still decides.
type bothGates struct {
	first, then EffectGate
	thenClient  *Client
}

// Admit implements EffectGate; when then refuses what first admitted,
// first hears the effect failed.
func (g *bothGates) Admit(ctx context.Context, c *Client, e *effect.Effect) error {
	if err := g.first.Admit(ctx, c, e); err != nil {
		return err
	}
	if err := g.then.Admit(ctx, g.thenClient, e); err != nil {
		if o, ok := g.first.(EffectListener); ok {
			o.Effected(ctx, c, e, err)
		}
		return err
	}
	return nil
}

// Effected tells both gates, when they listen, how an admitted effect
// ended.
func (g *bothGates) Effected(ctx context.Context, c *Client, e *effect.Effect, err error) {
	if o, ok := g.first.(EffectListener); ok {
		o.Effected(ctx, c, e, err)
	}
	if o, ok := g.then.(EffectListener); ok {
		o.Effected(ctx, g.thenClient, e, err)
	}
}

// Transport returns the client's transport, governed: a Publish through it
// is admitted by the gate that governs its context, as Client.Publish
// is (the client's, or under a handler's Ctx its agent's), so no handler
// reaches the log around its gate; every other method goes straight
// through, Join (and so Commit) included, ungoverned. It is not the value
// given to NewClient: assert optional methods on that one.
func (c *Client) Transport() Transport { return c.governed }

// governedTransport is the transport a Client hands out (see Transport).
// The transport underneath is an unexported field, not embedded, so no
// reflection reaches it around the gate.
type governedTransport struct {
	t Transport
	c *Client
}

// EnsureTopics implements Transport.
func (g *governedTransport) EnsureTopics(ctx context.Context, partitions uint32, topics ...string) error {
	return g.t.EnsureTopics(ctx, partitions, topics...)
}

// Join implements Transport, ungoverned: joining a group publishes nothing.
func (g *governedTransport) Join(ctx context.Context, topic, group string) (Subscription, error) {
	return g.t.Join(ctx, topic, group)
}

// StoredOffset implements Transport.
func (g *governedTransport) StoredOffset(ctx context.Context, topic, group string, partition uint32) (uint64, bool, error) {
	return g.t.StoredOffset(ctx, topic, group, partition)
}

// ReadRange implements Transport.
func (g *governedTransport) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]Incoming, error) {
	return g.t.ReadRange(ctx, topic, partition, offset, count)
}

// NextOffset implements Transport.
func (g *governedTransport) NextOffset(ctx context.Context, topic string, partition uint32) (uint64, error) {
	return g.t.NextOffset(ctx, topic, partition)
}

// Partitions implements Transport.
func (g *governedTransport) Partitions(ctx context.Context, topic string) (uint32, error) {
	return g.t.Partitions(ctx, topic)
}

// TopicIDs implements Transport.
func (g *governedTransport) TopicIDs(ctx context.Context, topic string) (uint32, uint32, error) {
	return g.t.TopicIDs(ctx, topic)
}

// Publish admits each record through the gate that governs ctx, as a
// publish effect, and publishes what was admitted once, without the
// client's retries and interceptors, as the transport itself would.
func (g *governedTransport) Publish(ctx context.Context, topic string, records ...Outgoing) ([]Position, error) {
	p := g.c.prod
	if !p.governed(ctx) {
		return g.t.Publish(ctx, topic, records...)
	}
	return p.publishGoverned(ctx, effect.Effect{Kind: effect.Publish}, topic, records,
		func(ctx context.Context, topic string, records []Outgoing) ([]Position, error) {
			return g.t.Publish(ctx, topic, records...)
		})
}

// Clock returns the client's clock.
func (c *Client) Clock() clock.Clock { return c.opts.Clock }

// IDs returns the client's id source.
func (c *Client) IDs() clock.IDSource { return c.opts.IDs }

// Logger returns the client's logger, for packages built on a client that
// log as it does.
func (c *Client) Logger() *slog.Logger { return c.log }

// Bootstrap creates the stream, the well-known topics (BootstrapTopics) and
// any extra topics with the given partition count; it is idempotent, so
// every process of a deployment may call it at start.
func (c *Client) Bootstrap(ctx context.Context, partitions uint32, extra ...string) error {
	return bootstrap(ctx, c.t, partitions, extra...)
}

// Close stops the client's reply readers: pending waits receive nothing
// more and end at their own timeout (or their context). Agents built from
// the client keep running until they are shut down.
func (c *Client) Close() error {
	c.mu.Lock()
	hubs := c.hubs
	c.hubs = map[string]*replyHub{}
	c.closed = true
	c.mu.Unlock()
	for _, h := range hubs {
		h.close()
	}
	return nil
}

// hub returns the reply reader of a topic, creating it on first use.
func (c *Client) hub(topic string) (*replyHub, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &Error{Code: CodeConfig, Msg: "client is closed"}
	}
	h, ok := c.hubs[topic]
	if !ok {
		h = newReplyHub(c, topic)
		c.hubs[topic] = h
	}
	return h, nil
}

// verifier returns the client's reply verifier, or nil.
func (c *Client) verifier() Verifier { return c.opts.Verifier }

// Verifier returns the client's verifier, or nil: packages that fold a
// topic themselves (memory) default to it.
func (c *Client) Verifier() Verifier { return c.opts.Verifier }
