package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/wire"
)

// remoteError returns the remote *Error an AGDX error reply carries. Its
// Code is the one its wire code maps to, so CodeOf reads a remote failure
// as it would the same failure here (CodeRemote for a wire code this module
// does not know); Wire keeps the code as it was received.
func remoteError(m *Message) error {
	if m.Envelope == nil || m.Envelope.Kind != wire.KindError {
		return nil
	}
	re := &Error{From: string(m.Envelope.Source), Wire: wire.ErrorInternal, remote: true}
	if body, err := wire.DecodeErrorBody(m.Envelope.Body); err == nil {
		re.Wire, re.Retryable, re.Detail = body.Code, body.Retryable, body.Detail
		if body.Message != nil {
			re.Msg = *body.Message
		}
	} else {
		re.Msg = "undecodable error body: " + err.Error()
	}
	re.Code = codeOfWire(re.Wire)
	return re
}

// sendAwaited publishes cmd as an AGDX command with a fresh correlation,
// after registering the waiter for its answer on the reply topic, so even
// an instant answer is seen. The target is the principal a verified answer
// must come from. done unregisters the waiter.
func (c *Client) sendAwaited(ctx context.Context, msg Out, spec *sendSpec) (*wire.Envelope, *replyWaiter, func(), error) {
	out, env, err := c.request(ctx, &msg, *spec)
	if err != nil {
		return nil, nil, nil, err
	}
	hub, err := c.hub(spec.reply())
	if err != nil {
		return nil, nil, nil, err
	}
	w, err := hub.register(ctx, env.Correlation.String(), msg.Target)
	if err != nil {
		return nil, nil, nil, err
	}
	if spec.accept != nil {
		// Set before the command is out, so no answer is judged without it.
		hub.mu.Lock()
		w.accept = spec.accept
		hub.mu.Unlock()
	}
	done := func() { hub.unregister(w) }
	if _, err := c.send(ctx, msg.topic(), out, env); err != nil {
		done()
		return nil, nil, nil, err
	}
	return env, w, done, nil
}

// Request publishes an AGDX command and waits for its correlated reply on
// the reply topic (WithReplyTopic, default agent.responses). The reply
// reader is registered before the command is published, so even an instant
// reply is seen. An AGDX error reply returns the message and its remote *Error;
// no reply within the timeout returns an error of CodeTimeout.
func (c *Client) Request(ctx context.Context, msg Out, opts ...Option) (*Message, error) {
	if s := specOf(opts); s.uses("Client.Request", optsMessage|optsIdle) != nil {
		return nil, s.uses("Client.Request", optsMessage|optsIdle)
	}
	if ris := c.requestInterceptors(); len(ris) > 0 {
		return c.interceptedRequest(ctx, ris, msg, opts)
	}
	return c.awaitReply(ctx, msg, opts)
}

// request builds the outgoing command of a request and its envelope: a
// request is a command with a fresh correlation, governed as an
// effect.Request unless WithEffectKind says otherwise.
func (c *Client) request(ctx context.Context, msg *Out, spec sendSpec) (*outgoing, *wire.Envelope, error) {
	if msg.Kind != "" && msg.Kind != wire.KindCommand {
		return nil, nil, &Error{Code: CodeConfig, Msg: "a request is a command, not a " + string(msg.Kind)}
	}
	if spec.effect == "" {
		spec.effect = effect.Request
	}
	out, err := c.outgoing(ctx, msg, spec)
	if err != nil {
		return nil, nil, err
	}
	env, err := c.envelope(out)
	if err != nil {
		return nil, nil, err
	}
	return out, env, nil
}

func (c *Client) awaitReply(ctx context.Context, msg Out, opts []Option) (*Message, error) {
	spec := specOf(opts)
	if spec.deadline.IsZero() {
		spec.deadline = c.opts.Clock.Now().Add(waitLeft(ctx, spec.wait()))
	}
	env, w, done, err := c.sendAwaited(ctx, msg, &spec)
	if err != nil {
		return nil, err
	}
	defer done()
	corr := *env.Correlation
	select {
	case <-w.final:
		m := w.answered()
		return m, remoteError(m)
	case <-c.opts.Clock.After(spec.wait()):
		if m := w.answered(); m != nil { // the answer and the timer raced
			return m, remoteError(m)
		}
		return nil, &Error{Code: CodeTimeout, Msg: "reply", Err: fmt.Errorf("no reply to %s within %s", corr, spec.wait())}
	case <-ctx.Done():
		if m := w.answered(); m != nil { // the answer and the cancellation raced
			return m, remoteError(m)
		}
		return nil, ctx.Err()
	}
}

// waitLeft is how long a wait of d lasts under ctx: d, or less when ctx's
// deadline comes first. It is a duration, not a time, because ctx's
// deadline is on the system clock and the client's Clock may be another.
func waitLeft(ctx context.Context, d time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return min(d, time.Until(dl))
	}
	return d
}

// SendPlain publishes payload as a plain message carrying prov as string
// headers, keyed by its conversation. It is not Send with a kind: a plain
// message has no envelope, and its provenance (lineage, correlation, usage)
// is the caller's to state in full.
func (c *Client) SendPlain(ctx context.Context, topic string, prov wire.Provenance, payload []byte, opts ...Option) (Position, error) {
	spec := specOf(opts)
	if err := spec.uses("Client.SendPlain", optsPlain|optsIdle); err != nil {
		return Position{}, err
	}
	return c.postPlain(ctx, topic, &prov, payload, &spec)
}
