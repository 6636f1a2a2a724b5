package runtime

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// outgoing is one AGDX message on its way out. Every send verb of the
// runtime (commands, requests, events, answers, statuses, acks, cards,
// stream openings) fills one and hands it to Client.envelope, the one place
// an outgoing envelope is built, so an option means the same on every verb.
type outgoing struct {
	kind wire.Kind
	// from is the sending agent's id; who names it in an error ("command
	// sender") and code is that error's code (CodeHandlerConfig when the
	// sender is the handling agent, else CodeConfig).
	from string
	who  string
	code Code
	// target is the agent that should act; "" for anyone.
	target string
	// conversation is the default conversation: WithConversation overrides
	// it, and a zero one means a new conversation.
	conversation wire.ID
	correlation  *wire.ID
	state        *wire.TaskState
	body         []byte
	spec         sendSpec
	// ct is the content type when the spec states none.
	ct wire.ContentType
	// key, when set, signs the envelope.
	key *sign.Key
}

// envelope builds o's envelope.
func (c *Client) envelope(o *outgoing) (*wire.Envelope, error) {
	source, err := parseAgentID(o.from)
	if err != nil {
		code := o.code
		if code == 0 {
			code = CodeConfig
		}
		return nil, &Error{Code: code, Msg: o.who, Err: err}
	}
	s := &o.spec
	env := &wire.Envelope{Kind: o.kind, Source: source, Correlation: o.correlation, TaskState: o.state, Body: o.body, Metadata: s.metadata}
	switch {
	case s.conversation != nil:
		env.Conversation = *s.conversation
	case o.conversation != wire.ID{}:
		env.Conversation = o.conversation
	default:
		env.Conversation = c.opts.IDs.NewID()
	}
	if o.target != "" {
		target, err := parseAgentID(o.target)
		if err != nil {
			return nil, &Error{Code: CodeConfig, Msg: string(o.kind) + " target", Err: err}
		}
		env.Target = &target
	}
	if s.idem != "" {
		key, err := wire.ParseIdempotencyKey(s.idem)
		if err != nil {
			return nil, &Error{Code: CodeConfig, Msg: "idempotency key", Err: err}
		}
		env.IdempotencyKey = &key
	}
	if !s.deadline.IsZero() {
		d := uint64(s.deadline.UnixMicro())
		env.DeadlineMicros = &d
	}
	if s.operation != "" {
		op := s.operation
		env.Operation = &op
	}
	if s.fence != nil {
		env.Metadata.Set(wire.HeaderFence, wire.UintValue(*s.fence))
	}
	env.Cause, env.CauseAt = s.cause, s.causeAt
	return env, nil
}

// send publishes env, built from o, on topic.
func (c *Client) send(ctx context.Context, topic string, o *outgoing, env *wire.Envelope) (Position, error) {
	key := o.key
	if o.spec.key != nil {
		key = o.spec.key
	}
	return c.prod.sendEnvelope(ctx, topic, env, o.spec.ct(o.ct), key, o.spec.effect)
}

// post builds o's envelope and publishes it on topic.
func (c *Client) post(ctx context.Context, topic string, o *outgoing) (*wire.Envelope, Position, error) {
	env, err := c.envelope(o)
	if err != nil {
		return nil, Position{}, err
	}
	pos, err := c.send(ctx, topic, o, env)
	if err != nil {
		return nil, Position{}, err
	}
	return env, pos, nil
}

// postPlain publishes body as a plain message with provenance prov on
// topic: the one path of plain messages. A plain message carries its
// provenance in string headers, which have no place for an operation or
// metadata, so asking for them is a configuration error, not ignored.
func (c *Client) postPlain(ctx context.Context, topic string, prov *wire.Provenance, body []byte, s *sendSpec) (Position, error) {
	if s.operation != "" || s.metadata != nil {
		return Position{}, &Error{Code: CodeConfig, Msg: "a plain message carries no operation or metadata; send an AGDX command or event for them"}
	}
	if s.conversation != nil {
		prov.Conversation = *s.conversation
	}
	if s.idem != "" {
		prov.IdempotencyKey = s.idem
	}
	if !s.deadline.IsZero() {
		d := uint64(s.deadline.UnixMicro())
		prov.Deadline = &d
	}
	if s.fence != nil {
		prov.Fence = s.fence
	}
	var extra []wire.Header
	if s.hasCT {
		extra = append(extra, wire.Header{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(s.contentType))})
	}
	pos, err := c.prod.sendPlain(ctx, topic, prov, body, s.effect, extra...)
	if err != nil {
		return Position{}, fmt.Errorf("send to %s: %w", topic, err)
	}
	return pos, nil
}
