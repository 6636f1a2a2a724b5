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
	// Gate decides before every effect of the client and of the agents on
	// it, unless an agent has a gate of its own (AgentConfig.Gate); package
	// govern builds one from a policy. Default none: every effect runs.
	Gate EffectGate
}

// Client is a process's handle on a transport: it publishes, owns the reply
// readers that request/reply and contracts wait on, and builds agents.
// Several agents and callers share one Client; it is safe for concurrent use.
type Client struct {
	t Transport
	// governed is t as Transport hands it out.
	governed *governedTransport
	prod     *Producer
	opts     ClientConfig
	log      *slog.Logger

	mu     sync.Mutex
	hubs   map[string]*replyHub
	closed bool
	// running holds the ids of the agents started on this client and not
	// yet stopped: one agent per id (see Agent.Start).
	running map[string]bool
}

// NewClient returns a client over t. A client over another client's
// Transport publishes through the transport underneath and is governed as
// that client is: by its gate unless opts sets one, and by a handler's
// agent gate under the handler's Ctx.
func NewClient(t Transport, opts ClientConfig) *Client {
	if g, ok := t.(*governedTransport); ok {
		t = g.Transport
		if opts.Gate == nil {
			opts.Gate = g.c.opts.Gate
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
	c := &Client{t: t, prod: newProducer(t, po, opts.Clock, opts.IDs, opts.Logger), opts: opts, log: opts.Logger, hubs: make(map[string]*replyHub)}
	c.prod.gate, c.prod.client = opts.Gate, c
	c.governed = &governedTransport{Transport: t, c: c}
	return c
}

// Transport returns the client's transport, governed: a Publish through it
// is admitted by the gate that governs its context, as Producer().Publish
// is (the client's, or under a handler's Ctx its agent's), so no handler
// reaches the log around its gate; every other method goes straight
// through. It is not the value given to NewClient: assert optional
// methods on that one.
func (c *Client) Transport() Transport { return c.governed }

// governedTransport is the transport a Client hands out (see Transport).
type governedTransport struct {
	Transport
	c *Client
}

// Publish admits each record through the gate that governs ctx, as a
// publish effect, and publishes what was admitted once, without the
// client's retries and interceptors, as the transport itself would.
func (g *governedTransport) Publish(ctx context.Context, topic string, records ...Outgoing) ([]Position, error) {
	p := g.c.prod
	if !p.governed(ctx) {
		return g.Transport.Publish(ctx, topic, records...)
	}
	return p.publishGoverned(ctx, effect.Effect{Kind: effect.Publish}, topic, records,
		func(ctx context.Context, topic string, records []Outgoing) ([]Position, error) {
			return g.Transport.Publish(ctx, topic, records...)
		})
}

// Producer returns the client's producer.
func (c *Client) Producer() *Producer { return c.prod }

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
