package runtime

import (
	"cmp"
	"context"

	"github.com/lasergo/laser/effect"
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
	// claims are what the handler declares about its effects (Ctx.WithClaims);
	// they take precedence over the agent's.
	claims effect.Claims
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
	c := &Consumer{cfg: ConsumerConfig{Agent: agent, RespondTopic: respondTopic, Client: client}, prod: client.prod, ids: client.IDs(), clock: client.Clock(), log: client.log}
	return &Ctx{Context: ctx, msg: m, c: c}
}

// Value answers, for this Ctx and every context derived from it, which
// message is being handled (see continue.go) and the handling agent's gate
// and claims (see EffectGate), so typed calls continue the conversation and
// every effect is governed as the agent's; other keys are the context's.
func (c *Ctx) Value(key any) any {
	if key == (handledKey{}) {
		return c
	}
	if _, ok := key.(gateKey); ok && (c.c.cfg.EffectGate != nil || c.c.cfg.Claims != (effect.Claims{}) || c.claims != (effect.Claims{})) {
		claims := c.c.cfg.Claims
		claims.EffectClass = cmp.Or(c.claims.EffectClass, claims.EffectClass)
		claims.DataClassification = cmp.Or(c.claims.DataClassification, claims.DataClassification)
		return agentGate{gate: c.c.cfg.EffectGate, claim: claims}
	}
	return c.Context.Value(key)
}

// Message returns the message being handled.
func (c *Ctx) Message() *Message { return c.msg }

// Agent returns the id of the agent handling the message, or "".
func (c *Ctx) Agent() string { return c.c.cfg.Agent }

// Client returns the client the agent runs on; when the agent has a gate
// or claims of its own, a view of it governed by them under any context
// (context.Background() included), so a handler publishes around no gate.
func (c *Ctx) Client() *Client {
	if c.c.client != nil {
		return c.c.client
	}
	return c.c.cfg.Client
}

// Verifier returns the verifier the handler's consumer checks signatures
// with, else its client's reply verifier, else nil: what folds of other
// records read from a handler (conversation assembly) should trust.
func (c *Ctx) Verifier() Verifier {
	if v := c.c.cfg.Verifier; v != nil {
		return v
	}
	return c.c.cfg.Client.verifier()
}

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

// Respond answers the handled message, targeted at its sender, on the
// agent's respond topic (WithReplyTopic names another). An AGDX command is
// answered with an AGDX response (signed when the agent has a signing key),
// as the reference's agents answer, or with a task status under
// WithTaskState (a progress report such as input-required); a plain message
// is answered with a plain message echoing its correlation. It fails with
// CodeNoRespondTopic when the agent has no respond topic and none is named,
// and with CodeConfig, before anything is sent, for an option an answer
// does not use (see respondUses).
func (c *Ctx) Respond(body []byte, opts ...Option) error {
	spec := specOf(opts)
	if err := spec.uses("Ctx.Respond", c.respondUses(&spec)); err != nil {
		return err
	}
	topic := cmp.Or(spec.replyTopic, c.c.cfg.RespondTopic)
	if topic == "" {
		return &Error{Code: CodeNoRespondTopic, Msg: "agent has no respond topic"}
	}
	if spec.state != nil {
		spec.operation = cmp.Or(spec.operation, wire.OperationTask)
		return c.postAnswer(topic, wire.KindStatus, body, spec, wire.ContentRaw)
	}
	if env := c.msg.Envelope; env != nil && env.Correlation != nil {
		return c.postAnswer(topic, wire.KindResponse, body, spec, wire.ContentRaw)
	}
	prov := c.replyProvenance()
	prov.Target = c.msg.Provenance.Agent
	spec.effect = effect.Response // a plain answer is an answer all the same
	_, err := c.Client().postPlain(c, topic, &prov, body, &spec)
	return err
}

// respondUses is the options Respond uses for spec: an answer stays in the
// handled conversation, carries no deadline (the wire forbids one) and is
// governed as an answer, so WithConversation, WithDeadline and
// WithEffectKind are refused; a task status carries no idempotency key; a
// plain answer carries no operation, metadata or signature.
func (c *Ctx) respondUses(spec *sendSpec) optionSet {
	const answer = optContentType | optIdempotencyKey | optFence | optReplyTopic | optTaskState
	switch {
	case spec.state != nil:
		return answer&^optIdempotencyKey | optOperation | optMetadata | optSigningKey
	case c.msg.Envelope != nil && c.msg.Envelope.Correlation != nil:
		return answer | optOperation | optMetadata | optSigningKey
	}
	return answer
}

// Fail answers the handled request with an AGDX error on the respond topic,
// which a waiting caller receives as a remote *Error.
func (c *Ctx) Fail(code wire.ErrorCode, message string, retryable bool) error {
	topic := c.c.cfg.RespondTopic
	if topic == "" {
		return &Error{Code: CodeNoRespondTopic, Msg: "agent has no respond topic"}
	}
	body, err := errorBody(code, message, retryable)
	if err != nil {
		return err
	}
	return c.postAnswer(topic, wire.KindError, body, sendSpec{}, wire.ContentCBOR)
}

// answer is the outgoing response, error, status or stream record of kind
// answering the handled message: same conversation and correlation, from
// this agent to the sender, signed with the agent's key.
func (c *Ctx) answer(kind wire.Kind, body []byte, spec sendSpec, ct wire.ContentType) (*outgoing, error) {
	corr, ok := c.correlation()
	if !ok {
		return nil, &Error{Code: CodeHandlerConfig, Msg: "the handled message carries no correlation to answer"}
	}
	o := &outgoing{kind: kind, from: c.c.cfg.Agent, who: "answering needs an agent id", code: CodeHandlerConfig,
		conversation: c.msg.Provenance.Conversation, correlation: &corr, body: body, spec: spec, ct: ct, key: c.c.cfg.SigningKey}
	if spec.state != nil {
		o.state = spec.state
	}
	if to := c.msg.Provenance.Agent; to != "" && wire.CheckSDKAgentID(to) == nil {
		o.target = to
	}
	return o, nil
}

// postAnswer publishes an answer (see answer) on topic.
func (c *Ctx) postAnswer(topic string, kind wire.Kind, body []byte, spec sendSpec, ct wire.ContentType) error {
	o, err := c.answer(kind, body, spec, ct)
	if err != nil {
		return err
	}
	_, _, err = c.Client().post(c, topic, o)
	return err
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

// Send sends body as a plain message to another agent within the handled
// conversation (WithConversation picks another, recorded as a
// sub-conversation of the handled one), with the handled record as causal
// parent. It returns where the message landed. A plain message has
// no operation or metadata: WithOperation and WithMetadata make it fail
// with CodeConfig (send an AGDX command or event with Client.Send for them:
// c.Client().Send(c, Out{...}) sends as this agent).
func (c *Ctx) Send(topic, target string, body []byte, opts ...Option) (Position, error) {
	spec := specOf(opts)
	if err := spec.uses("Ctx.Send", optsPlain|optsIdle); err != nil {
		return Position{}, err
	}
	prov := c.replyProvenance()
	prov.Correlation = ""
	prov.Target = target
	if in := &c.msg.Provenance; spec.conversation != nil && *spec.conversation != in.Conversation {
		// Another conversation started from this one: it records its
		// lineage, as SpawnSubconversation's provenance does, so history
		// assembled by parent or root finds it.
		parent, root := in.Conversation, in.Conversation
		if in.RootConversation != nil {
			root = *in.RootConversation
		}
		prov.ParentConversation, prov.RootConversation = &parent, &root
	}
	return c.Client().postPlain(c, topic, &prov, body, &spec)
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
