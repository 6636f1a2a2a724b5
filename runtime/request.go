package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lasergo/laser/wire"
)

// RemoteError is an AGDX error reply: the remote agent failed the request.
type RemoteError struct {
	From      string // the agent that failed
	Code      wire.ErrorCode
	Message   string
	Retryable bool
	Detail    wire.Metadata
}

func (e *RemoteError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "request failed"
	}
	if e.From != "" {
		return fmt.Sprintf("%s: %s (%s)", e.From, msg, e.Code)
	}
	return fmt.Sprintf("%s (%s)", msg, e.Code)
}

// remoteError returns the RemoteError an AGDX error reply carries.
func remoteError(m *Message) error {
	if m.Envelope == nil || m.Envelope.Kind != wire.KindError {
		return nil
	}
	re := &RemoteError{From: string(m.Envelope.Source), Code: wire.ErrorInternal}
	if body, err := wire.DecodeErrorBody(m.Envelope.Body); err == nil {
		re.Code, re.Retryable, re.Detail = body.Code, body.Retryable, body.Detail
		if body.Message != nil {
			re.Message = *body.Message
		}
	} else {
		re.Message = "undecodable error body: " + err.Error()
	}
	return re
}

// Command is an AGDX command to publish.
type Command struct {
	Topic  string // where the target listens; default agent.commands
	From   string // the sending agent's id; required
	Target string // the agent that should act; optional (any listener)
	Body   []byte
}

// command builds the envelope of cmd under spec.
func (c *Client) command(cmd Command, spec *sendSpec, corr wire.ID) (*wire.Envelope, error) {
	from, err := wire.ParseAgentID(cmd.From)
	if err != nil {
		return nil, &Error{Code: CodeConfig, Msg: "command sender", Err: err}
	}
	env := &wire.Envelope{Kind: wire.KindCommand, Source: from, Correlation: &corr, Body: cmd.Body, Metadata: spec.metadata}
	if spec.conversation != nil {
		env.Conversation = *spec.conversation
	} else {
		env.Conversation = c.opts.IDs.NewID()
	}
	if cmd.Target != "" {
		target, err := wire.ParseAgentID(cmd.Target)
		if err != nil {
			return nil, &Error{Code: CodeConfig, Msg: "command target", Err: err}
		}
		env.Target = &target
	}
	if spec.idem != "" {
		key, err := wire.ParseIdempotencyKey(spec.idem)
		if err != nil {
			return nil, &Error{Code: CodeConfig, Msg: "idempotency key", Err: err}
		}
		env.IdempotencyKey = &key
	}
	if !spec.deadline.IsZero() {
		d := uint64(spec.deadline.UnixMicro())
		env.DeadlineMicros = &d
	}
	if spec.operation != "" {
		op := spec.operation
		env.Operation = &op
	}
	if spec.fence != nil {
		if env.Metadata == nil {
			env.Metadata = wire.Metadata{}
		}
		env.Metadata[wire.HeaderFence] = wire.UintValue(*spec.fence)
	}
	return env, nil
}

// SendCommand publishes an AGDX command without waiting for a reply and
// returns its envelope (with the minted record and correlation ids).
func (c *Client) SendCommand(ctx context.Context, cmd Command, opts ...SendOption) (*wire.Envelope, error) {
	spec := buildSpec(opts)
	env, err := c.command(cmd, &spec, c.opts.IDs.NewID())
	if err != nil {
		return nil, err
	}
	if _, err := c.prod.SendEnvelope(ctx, topicOr(cmd.Topic, TopicCommands), env, spec.ct(wire.ContentRaw), nil); err != nil {
		return nil, err
	}
	return env, nil
}

// Request publishes an AGDX command and waits for its correlated reply on
// the reply topic (WithReplyTopic, default agent.responses). The reply
// reader is registered before the command is published, so even an instant
// reply is seen. An AGDX error reply returns the message and a *RemoteError;
// no reply within the timeout returns an error matching ErrTimeout.
func (c *Client) Request(ctx context.Context, cmd Command, opts ...SendOption) (*Message, error) {
	spec := buildSpec(opts)
	corr := c.opts.IDs.NewID()
	env, err := c.command(cmd, &spec, corr)
	if err != nil {
		return nil, err
	}
	hub, err := c.hub(spec.reply())
	if err != nil {
		return nil, err
	}
	w, err := hub.register(ctx, corr.String(), cmd.Target)
	if err != nil {
		return nil, err
	}
	defer hub.unregister(w)
	if _, err := c.prod.SendEnvelope(ctx, topicOr(cmd.Topic, TopicCommands), env, spec.ct(wire.ContentRaw), nil); err != nil {
		return nil, err
	}
	timeout := c.opts.Clock.After(spec.wait())
	for {
		select {
		case m := <-w.ch:
			if !isTerminalReply(m) {
				continue
			}
			return m, remoteError(m)
		case <-timeout:
			return nil, &Error{Code: CodeTimeout, Msg: "reply", Err: fmt.Errorf("no reply to %s within %s", corr, spec.wait())}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ContractOutcome is how a contract ended.
type ContractOutcome uint8

// Contract outcomes.
const (
	// Completed: the target answered with a response (or a plain reply).
	Completed ContractOutcome = iota + 1
	// Failed: the target answered with an AGDX error.
	Failed
	// NotConsumed: the expiry passed without a pickup acknowledgement.
	NotConsumed
	// TimedOut: the deadline passed without an answer (a picked-up command
	// that was dead-lettered ends here too: no error is sent for it).
	TimedOut
)

func (o ContractOutcome) String() string {
	switch o {
	case Completed:
		return "completed"
	case Failed:
		return "failed"
	case NotConsumed:
		return "not consumed"
	case TimedOut:
		return "timed out"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Contract is a command with delivery terms.
type Contract struct {
	Command
	// Expiry, when set, stamps the command's deadline at now+Expiry (so a
	// late pickup is dead-lettered) and reports NotConsumed when no pickup
	// acknowledgement arrives by then. Needs ack-on-pickup on the target.
	Expiry time.Duration
	// Deadline bounds the whole wait. Default 30 s.
	Deadline time.Duration
}

// ContractResult is a finished contract.
type ContractResult struct {
	Outcome  ContractOutcome
	Reply    *Message // the response or error, when one arrived
	Consumed bool     // a pickup acknowledgement was seen
	Envelope *wire.Envelope
}

// Err maps the outcome to an error: nil for Completed, a *RemoteError for
// Failed, ErrNotPickedUp for NotConsumed and ErrTimeout for TimedOut.
func (r *ContractResult) Err() error {
	switch r.Outcome {
	case Completed:
		return nil
	case Failed:
		return remoteError(r.Reply)
	case NotConsumed:
		return &Error{Code: CodeNotPickedUp, Msg: "command was not picked up before its expiry"}
	}
	if r.Consumed {
		return &Error{Code: CodeTimeout, Msg: "command was picked up but not answered before the deadline"}
	}
	return &Error{Code: CodeTimeout, Msg: "command was not answered before the deadline"}
}

// SendContract publishes a contract's command to exactly one target and
// watches the reply topic until an answer, the expiry or the deadline.
// Under a client verifier only replies signed by the target count.
func (c *Client) SendContract(ctx context.Context, k Contract, opts ...SendOption) (*ContractResult, error) {
	if k.Target == "" {
		return nil, &Error{Code: CodeInvalid, Msg: "a contract needs exactly one target"}
	}
	spec := buildSpec(opts)
	now := c.opts.Clock.Now()
	if k.Expiry > 0 {
		spec.deadline = now.Add(k.Expiry)
	}
	deadline := k.Deadline
	if deadline <= 0 {
		deadline = DefaultRequestTimeout
	}
	corr := c.opts.IDs.NewID()
	env, err := c.command(k.Command, &spec, corr)
	if err != nil {
		return nil, err
	}
	hub, err := c.hub(spec.reply())
	if err != nil {
		return nil, err
	}
	w, err := hub.register(ctx, corr.String(), k.Target)
	if err != nil {
		return nil, err
	}
	defer hub.unregister(w)
	if _, err := c.prod.SendEnvelope(ctx, topicOr(k.Topic, TopicCommands), env, spec.ct(wire.ContentRaw), nil); err != nil {
		return nil, err
	}
	res := &ContractResult{Envelope: env}
	expireAt, deadAt := now.Add(k.Expiry), now.Add(deadline)
	for {
		// Checks in the reference's order: an answer, then a missing pickup
		// past the expiry, then the deadline.
		now := c.opts.Clock.Now()
		if k.Expiry > 0 && !res.Consumed && !now.Before(expireAt) {
			res.Outcome = NotConsumed
			return res, nil
		}
		if !now.Before(deadAt) {
			res.Outcome = TimedOut
			return res, nil
		}
		next := deadAt
		if k.Expiry > 0 && !res.Consumed && expireAt.Before(next) {
			next = expireAt
		}
		select {
		case m := <-w.ch:
			if m.Envelope != nil && m.Envelope.Kind == wire.KindStatus {
				if m.Envelope.Operation != nil && *m.Envelope.Operation == wire.OperationTask &&
					m.Envelope.TaskState != nil && *m.Envelope.TaskState == wire.TaskWorking {
					res.Consumed = true
				}
				continue
			}
			if !isTerminalReply(m) {
				continue
			}
			res.Reply = m
			res.Outcome = Completed
			if remoteError(m) != nil {
				res.Outcome = Failed
			}
			return res, nil
		case <-c.opts.Clock.After(next.Sub(now)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func topicOr(topic, def string) string {
	if topic != "" {
		return topic
	}
	return def
}

// Emit publishes an AGDX event from agent from, in a new conversation unless
// WithConversation says otherwise.
func (c *Client) Emit(ctx context.Context, topic, from string, body []byte, opts ...SendOption) (*wire.Envelope, error) {
	spec := buildSpec(opts)
	source, err := wire.ParseAgentID(from)
	if err != nil {
		return nil, &Error{Code: CodeConfig, Msg: "event source", Err: err}
	}
	env := &wire.Envelope{Kind: wire.KindEvent, Source: source, Body: body, Metadata: spec.metadata}
	if spec.conversation != nil {
		env.Conversation = *spec.conversation
	} else {
		env.Conversation = c.opts.IDs.NewID()
	}
	if spec.operation != "" {
		op := spec.operation
		env.Operation = &op
	}
	if spec.idem != "" {
		key, err := wire.ParseIdempotencyKey(spec.idem)
		if err != nil {
			return nil, &Error{Code: CodeConfig, Msg: "idempotency key", Err: err}
		}
		env.IdempotencyKey = &key
	}
	if _, err := c.prod.SendEnvelope(ctx, topic, env, spec.ct(wire.ContentRaw), nil); err != nil {
		return nil, err
	}
	return env, nil
}

// SendPlain publishes payload as a plain message carrying prov as string
// headers, keyed by its conversation.
func (c *Client) SendPlain(ctx context.Context, topic string, prov wire.Provenance, payload []byte, opts ...SendOption) (Position, error) {
	spec := buildSpec(opts)
	var extra []wire.Header
	if spec.hasCT {
		extra = append(extra, wire.Header{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(spec.contentType))})
	}
	return c.prod.SendPlain(ctx, topic, &prov, payload, extra...)
}
