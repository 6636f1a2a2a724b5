package runtime

import (
	"context"
	"time"

	"github.com/lasergo/laser/wire"
)

// Contract is a command with delivery terms.
type Contract struct {
	Out
	// Expiry, when set, stamps the command's deadline at now+Expiry (so a
	// late pickup is dead-lettered) and ends the contract with
	// CodeNotPickedUp when no pickup acknowledgement arrives by then. Needs ack-on-pickup on the target.
	Expiry time.Duration
	// Deadline bounds the whole wait. Default 30 s.
	Deadline time.Duration
	// ReplyTopic is where the answer and the pickup acknowledgement are
	// read. Default agent.responses.
	ReplyTopic string
}

// ContractResult is a finished contract.
type ContractResult struct {
	Reply    *Message // the response or error, when one arrived
	Consumed bool     // a pickup acknowledgement was seen
	Envelope *wire.Envelope
	err      error
}

// Err says how the contract ended: nil when the target answered with a
// response (or a plain reply); a remote *Error when it answered with an
// AGDX error (Reply is that answer); CodeNotPickedUp when the expiry passed
// without a pickup acknowledgement; CodeTimeout when the deadline passed
// without an answer (a picked-up command that was dead-lettered ends here
// too: no error is sent for it).
func (r *ContractResult) Err() error { return r.err }

// SendContract publishes a contract's command to exactly one target and
// watches the reply topic until an answer, the expiry or the deadline.
// Under a client verifier only replies signed by the target count.
func (c *Client) SendContract(ctx context.Context, k Contract, opts ...Option) (*ContractResult, error) {
	if k.Target == "" {
		return nil, &Error{Code: CodeInvalid, Msg: "a contract needs exactly one target"}
	}
	if k.From == "" {
		return nil, &Error{Code: CodeInvalid, Msg: "a contract needs a sender"}
	}
	spec := specOf(opts)
	// The contract's own fields say where and how long it waits.
	if err := spec.uses("Client.SendContract", optsMessage|optAnswerFrom); err != nil {
		return nil, err
	}
	spec.replyTopic = k.ReplyTopic
	now := c.opts.Clock.Now()
	if k.Expiry > 0 {
		if !spec.deadline.IsZero() {
			return nil, &Error{Code: CodeConfig, Msg: "a contract with an Expiry stamps its own deadline; drop WithDeadline"}
		}
		spec.deadline = now.Add(k.Expiry)
	}
	deadline := k.Deadline
	if deadline <= 0 {
		deadline = DefaultRequestTimeout
	}
	env, w, done, err := c.sendAwaited(ctx, k.Out, &spec)
	if err != nil {
		return nil, err
	}
	defer done()
	res := &ContractResult{Envelope: env}
	expireAt, deadAt := now.Add(k.Expiry), now.Add(deadline)
	for {
		// Checks in the reference's order: an answer, then a missing pickup
		// past the expiry, then the deadline. The answer is looked at first
		// every time, so one that raced a timer still wins.
		res.Consumed = w.consumed.Load()
		if m := w.answered(); m != nil {
			res.Reply, res.err = m, remoteError(m)
			return res, nil
		}
		now := c.opts.Clock.Now()
		if k.Expiry > 0 && !res.Consumed && !now.Before(expireAt) {
			res.err = &Error{Code: CodeNotPickedUp, Msg: "command was not picked up before its expiry"}
			return res, nil
		}
		if !now.Before(deadAt) {
			res.err = timedOut(res.Consumed)
			return res, nil
		}
		next := deadAt
		if k.Expiry > 0 && !res.Consumed && expireAt.Before(next) {
			next = expireAt
		}
		select {
		case <-w.final: // the top of the loop judges the answer
		case <-w.progress:
		case <-c.opts.Clock.After(next.Sub(now)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// timedOut is the error of a contract whose deadline passed without an
// answer.
func timedOut(consumed bool) error {
	if consumed {
		return &Error{Code: CodeTimeout, Msg: "command was picked up but not answered before the deadline"}
	}
	return &Error{Code: CodeTimeout, Msg: "command was not answered before the deadline"}
}
