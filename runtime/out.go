package runtime

import (
	"cmp"
	"context"

	"github.com/lasergo/laser/wire"
)

// Out is one message to send: what it is, who sends it, to whom and where.
// Client.Send, Request, Stream and SendContract take one; options refine it
// per send (see Option).
type Out struct {
	// Kind is what the message is: wire.KindCommand (the default),
	// KindEvent or KindStatus; with ReplyTo, KindResponse or KindError
	// (whose Body is an encoded wire.ErrorBody) or, with WithTaskState, a
	// task status.
	Kind wire.Kind
	// Topic is where it goes. Default agent.commands for a command,
	// agent.registry for a status and agent.responses for an answer.
	Topic string
	// From is the sending agent's id. Under a handler's Ctx an empty From,
	// or the handling agent's own id, sends as the handling agent: from its
	// id, in the handled conversation, signed with its key.
	From string
	// Target is the agent that should act; "" for anyone (an answer's
	// default is the sender of the request it answers).
	Target string
	Body   []byte
	// ReplyTo, when set, is the request this message answers (an AGDX
	// command with a correlation, read from a log): the answer goes in its
	// conversation and echoes its correlation. It is how a client answers
	// outside a handler (a person approving a pending request).
	ReplyTo *Message
}

// kind is o's kind, a command when it states none.
func (o *Out) kind() wire.Kind { return cmp.Or(o.Kind, wire.KindCommand) }

// topic is where o goes: its Topic, or its kind's default.
func (o *Out) topic() string {
	if o.Topic != "" {
		return o.Topic
	}
	switch o.kind() {
	case wire.KindCommand:
		return TopicCommands
	case wire.KindStatus:
		if o.ReplyTo != nil { // a task status answering a request
			return TopicResponses
		}
		return TopicRegistry
	case wire.KindResponse, wire.KindError:
		return TopicResponses
	}
	return ""
}

// Send publishes msg without waiting for an answer and returns its envelope
// (with the minted record id, and a command's fresh correlation). The
// client's gate admits it first, as the effect its kind performs; an option
// the kind does not use (see sendUses) fails with CodeConfig before that.
func (c *Client) Send(ctx context.Context, msg Out, opts ...Option) (*wire.Envelope, error) {
	spec := specOf(opts)
	if err := spec.uses(msg.sendUses()); err != nil {
		return nil, err
	}
	o, err := c.outgoing(ctx, &msg, spec)
	if err != nil {
		return nil, err
	}
	env, _, err := c.post(ctx, msg.topic(), o)
	return env, err
}

// sendUses names Client.Send of o's kind and the options it uses: those of
// an AGDX message, less what the wire forbids for the kind (no deadline
// but on a command, no idempotency key on a status or an error, no content
// type on an error), a task state only on a status, and neither another
// conversation nor another effect kind on an answer (it stays in the
// conversation it answers and is governed as an answer); a send waits for
// nothing, so it ignores the wait options.
func (o *Out) sendUses() (string, optionSet) {
	verb := "Client.Send of kind " + string(o.kind())
	switch o.kind() {
	case wire.KindCommand:
		return verb, optsMessage | optsIdle
	case wire.KindEvent:
		return verb, optsMessage&^optDeadline | optsIdle
	case wire.KindStatus:
		return verb, optsMessage&^(optDeadline|optIdempotencyKey) | optTaskState | optsIdle
	}
	used := optsMessage&^(optDeadline|optEffectKind) | optsIdle
	if o.Kind == wire.KindError {
		used &^= optIdempotencyKey | optContentType
	}
	if o.ReplyTo != nil {
		used &^= optConversation
	}
	return verb, used
}

// outgoing is msg on its way out under spec: the one place a message value
// becomes an outgoing envelope's parts.
func (c *Client) outgoing(ctx context.Context, msg *Out, spec sendSpec) (*outgoing, error) {
	kind := msg.kind()
	o := &outgoing{kind: kind, from: msg.From, target: msg.Target, body: msg.Body, spec: spec, ct: wire.ContentRaw}
	switch kind {
	case wire.KindCommand:
		o.who = "command sender"
		corr := c.opts.IDs.NewID()
		o.correlation = &corr
	case wire.KindEvent:
		o.who = "event source"
	case wire.KindStatus:
		o.who, o.ct, o.state = spec.operation+" source", wire.ContentCBOR, spec.state
	case wire.KindResponse, wire.KindError:
		o.who = "answering agent"
		if kind == wire.KindError {
			if spec.hasCT {
				return nil, &Error{Code: CodeConfig, Msg: "an error answer is a CBOR error body; WithContentType does not apply to it"}
			}
			o.ct = wire.ContentCBOR
		}
	default:
		return nil, &Error{Code: CodeConfig, Msg: "cannot send a message of kind " + string(kind) + " (chunks belong to Ctx.Stream)"}
	}
	if msg.ReplyTo != nil {
		if err := answering(o, msg.ReplyTo); err != nil {
			return nil, err
		}
	}
	if h := handledBy(ctx); h != nil && (msg.From == "" || msg.From == h.c.cfg.Agent) {
		o.from, o.key = h.c.cfg.Agent, h.c.cfg.SigningKey
		o.who, o.code = "sending as the handling agent needs an agent id", CodeHandlerConfig
		if h.msg != nil && msg.ReplyTo == nil {
			o.conversation = h.msg.Provenance.Conversation
		}
	}
	return o, nil
}

// answering makes o an answer to req: in its conversation, echoing its
// correlation, targeted at its sender unless o has a target.
func answering(o *outgoing, req *Message) error {
	env := req.Envelope
	if env == nil || env.Correlation == nil || env.Kind != wire.KindCommand {
		return &Error{Code: CodeInvalid, Msg: req.Position.String() + " is not a request (an AGDX command with a correlation)"}
	}
	if o.kind != wire.KindResponse && o.kind != wire.KindError && (o.kind != wire.KindStatus || o.state == nil) {
		return &Error{Code: CodeConfig, Msg: "a message answering a request is a response, an error or a task status, not a " + string(o.kind)}
	}
	corr := *env.Correlation
	o.conversation, o.correlation = req.Provenance.Conversation, &corr
	if to := req.Provenance.Agent; o.target == "" && to != "" && wire.CheckSDKAgentID(to) == nil {
		o.target = to
	}
	return nil
}
