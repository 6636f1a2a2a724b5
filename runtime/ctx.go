package runtime

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/internal/testhook"
	"github.com/lasergo/laser/wire"
)

// Ctx is what a handler gets: a context.Context (cancelled on a hard stop or
// when the shutdown grace runs out), the message, and the calls a handler
// makes: respond, fail, send, request, emit events and statuses.
type Ctx struct {
	context.Context
	msg *Message
	c   *Consumer
	// attempt is the one-based number of the handler attempt under way.
	attempt int
}

// Attempt returns the one-based number of the handler attempt under way (0
// outside a consumer's dispatch).
func (c *Ctx) Attempt() int { return c.attempt }

// WithContext returns a copy of c running under ctx, for an Interceptor
// that hands the handler a derived context (a span, a deadline, values).
func (c *Ctx) WithContext(ctx context.Context) *Ctx {
	cp := *c
	cp.Context = ctx
	return &cp
}

func init() {
	testhook.NewCtx = func(ctx context.Context, client, msg any, agent, respondTopic string) any {
		return detachedCtx(ctx, client.(*Client), msg.(*Message), agent, respondTopic)
	}
}

// detachedCtx returns a Ctx outside any consumer (for lasertest): Respond and
// friends publish through client as agent.
func detachedCtx(ctx context.Context, client *Client, m *Message, agent, respondTopic string) *Ctx {
	c := &Consumer{cfg: ConsumerConfig{Agent: agent, RespondTopic: respondTopic, Client: client}, prod: client.Producer(), ids: client.IDs(), clock: client.Clock(), log: client.log}
	return &Ctx{Context: ctx, msg: m, c: c}
}

// Message returns the message being handled.
func (c *Ctx) Message() *Message { return c.msg }

// Agent returns the id of the agent handling the message, or "".
func (c *Ctx) Agent() string { return c.c.cfg.Agent }

// Client returns the client the agent runs on.
func (c *Ctx) Client() *Client { return c.c.cfg.Client }

// replyProvenance is the provenance of an answer to the handled message:
// same conversation and root, causal parent at the handled record, this
// agent as sender, the request's correlation echoed. The idempotency key,
// parent conversation, deadline, fence and usage are deliberately dropped.
func (c *Ctx) replyProvenance() wire.Provenance {
	in := &c.msg.Provenance
	parent := wire.MessageID{Partition: c.msg.Position.Partition, Offset: c.msg.Position.Offset}
	return wire.Provenance{
		Conversation:     in.Conversation,
		RootConversation: in.RootConversation,
		CausalParent:     &parent,
		Agent:            c.c.cfg.Agent,
		Correlation:      in.Correlation,
	}
}

// Respond answers the handled message on the agent's respond topic,
// targeted at its sender. An agent with a signing key answers an AGDX
// command with a signed AGDX response; otherwise the answer is a plain
// message echoing the correlation. It fails with ErrNoRespondTopic when the
// agent has no respond topic.
func (c *Ctx) Respond(body []byte, opts ...SendOption) error {
	topic := c.c.cfg.RespondTopic
	if topic == "" {
		return &Error{Code: CodeNoRespondTopic, Msg: "agent has no respond topic"}
	}
	spec := buildSpec(opts)
	if env := c.msg.Envelope; c.c.cfg.SigningKey != nil && env != nil && env.Correlation != nil {
		resp, err := c.answer(wire.KindResponse, body)
		if err != nil {
			return err
		}
		_, err = c.c.prod.SendEnvelope(c, topic, resp, spec.ct(wire.ContentRaw), c.c.cfg.SigningKey)
		return err
	}
	prov := c.replyProvenance()
	prov.Target = c.msg.Provenance.Agent
	return c.sendPlain(topic, &prov, body, &spec)
}

// ReplyOn answers the handled message on any topic, untargeted.
func (c *Ctx) ReplyOn(topic string, body []byte, opts ...SendOption) error {
	spec := buildSpec(opts)
	prov := c.replyProvenance()
	return c.sendPlain(topic, &prov, body, &spec)
}

// Fail answers the handled request with an AGDX error on the respond topic,
// which a waiting caller receives as a *RemoteError.
func (c *Ctx) Fail(code wire.ErrorCode, message string, retryable bool) error {
	topic := c.c.cfg.RespondTopic
	if topic == "" {
		return &Error{Code: CodeNoRespondTopic, Msg: "agent has no respond topic"}
	}
	body, err := errorBody(code, message, retryable)
	if err != nil {
		return err
	}
	env, err := c.answer(wire.KindError, body)
	if err != nil {
		return err
	}
	_, err = c.c.prod.SendEnvelope(c, topic, env, wire.ContentCBOR, c.c.cfg.SigningKey)
	return err
}

// answer builds a response or error envelope for the handled message.
func (c *Ctx) answer(kind wire.Kind, body []byte) (*wire.Envelope, error) {
	source, err := wire.ParseAgentID(c.c.cfg.Agent)
	if err != nil {
		return nil, &Error{Code: CodeHandlerConfig, Msg: "answering needs an agent id", Err: err}
	}
	corr, ok := c.correlation()
	if !ok {
		return nil, &Error{Code: CodeHandlerConfig, Msg: "the handled message carries no correlation to answer"}
	}
	env := &wire.Envelope{Kind: kind, Conversation: c.msg.Provenance.Conversation, Source: source, Correlation: &corr, Body: body}
	if to := c.msg.Provenance.Agent; to != "" {
		if target, err := wire.ParseAgentID(to); err == nil {
			env.Target = &target
		}
	}
	return env, nil
}

// correlation returns the handled message's correlation as an id: the
// envelope's, or a plain message's agdx.corr when it is id text.
func (c *Ctx) correlation() (wire.ID, bool) {
	if env := c.msg.Envelope; env != nil && env.Correlation != nil {
		return *env.Correlation, true
	}
	id, err := wire.ParseID(c.msg.Provenance.Correlation)
	return id, err == nil
}

// Send sends body to another agent within the handled conversation, with
// the handled record as causal parent. It returns where the message landed.
func (c *Ctx) Send(topic, target string, body []byte, opts ...SendOption) (Position, error) {
	spec := buildSpec(opts)
	prov := c.replyProvenance()
	prov.Correlation = ""
	prov.Target = target
	prov.IdempotencyKey = spec.idem
	if !spec.deadline.IsZero() {
		d := uint64(spec.deadline.UnixMicro())
		prov.Deadline = &d
	}
	prov.Fence = spec.fence
	return c.publishPlain(topic, &prov, body, &spec)
}

// Request sends an AGDX command to target within the handled conversation
// and waits for its reply (see Client.Request).
func (c *Ctx) Request(topic, target string, body []byte, opts ...SendOption) (*Message, error) {
	conv := c.msg.Provenance.Conversation
	opts = append([]SendOption{WithConversation(conv)}, opts...)
	return c.Client().Request(c, Command{Topic: topic, From: c.c.cfg.Agent, Target: target, Body: body}, opts...)
}

// Emit publishes an AGDX event from this agent within the handled conversation.
func (c *Ctx) Emit(topic string, body []byte, opts ...SendOption) error {
	spec := buildSpec(opts)
	source, err := wire.ParseAgentID(c.c.cfg.Agent)
	if err != nil {
		return &Error{Code: CodeHandlerConfig, Msg: "emitting needs an agent id", Err: err}
	}
	env := &wire.Envelope{Kind: wire.KindEvent, Conversation: c.msg.Provenance.Conversation, Source: source, Body: body, Metadata: spec.metadata}
	if spec.operation != "" {
		op := spec.operation
		env.Operation = &op
	}
	_, err = c.c.prod.SendEnvelope(c, topic, env, spec.ct(wire.ContentRaw), c.c.cfg.SigningKey)
	return err
}

// Status publishes a task status for the handled request on the respond
// topic (progress reports such as input-required).
func (c *Ctx) Status(state wire.TaskState) error {
	topic := c.c.cfg.RespondTopic
	if topic == "" {
		return &Error{Code: CodeNoRespondTopic, Msg: "agent has no respond topic"}
	}
	env, err := c.answer(wire.KindStatus, nil)
	if err != nil {
		return err
	}
	op := wire.OperationTask
	env.Operation, env.TaskState = &op, &state
	_, err = c.c.prod.SendEnvelope(c, topic, env, wire.ContentRaw, c.c.cfg.SigningKey)
	return err
}

// SpawnSubconversation returns provenance for a new conversation that is a
// child of the handled one (its parent and root are recorded).
func (c *Ctx) SpawnSubconversation() wire.Provenance {
	in := &c.msg.Provenance
	parent := in.Conversation
	root := parent
	if in.RootConversation != nil {
		root = *in.RootConversation
	}
	return wire.Provenance{Conversation: c.c.ids.NewID(), ParentConversation: &parent, RootConversation: &root}
}

func (c *Ctx) sendPlain(topic string, prov *wire.Provenance, body []byte, spec *sendSpec) error {
	_, err := c.publishPlain(topic, prov, body, spec)
	return err
}

func (c *Ctx) publishPlain(topic string, prov *wire.Provenance, body []byte, spec *sendSpec) (Position, error) {
	var extra []wire.Header
	if spec.hasCT {
		extra = append(extra, wire.Header{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(spec.contentType))})
	}
	pos, err := c.c.prod.SendPlain(c, topic, prov, body, extra...)
	if err != nil {
		return Position{}, fmt.Errorf("send to %s: %w", topic, err)
	}
	return pos, nil
}
