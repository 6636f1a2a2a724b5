package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/lasergo/laser/wire"
)

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
	Out
	// Expiry, when set, stamps the command's deadline at now+Expiry (so a
	// late pickup is dead-lettered) and reports NotConsumed when no pickup
	// acknowledgement arrives by then. Needs ack-on-pickup on the target.
	Expiry time.Duration
	// Deadline bounds the whole wait. Default 30 s.
	Deadline time.Duration
	// ReplyTopic is where the answer and the pickup acknowledgement are
	// read. Default agent.responses.
	ReplyTopic string
}

// ContractResult is a finished contract.
type ContractResult struct {
	Outcome  ContractOutcome
	Reply    *Message // the response or error, when one arrived
	Consumed bool     // a pickup acknowledgement was seen
	Envelope *wire.Envelope
}

// Err maps the outcome to an error: nil for Completed, a remote *Error for
// Failed, CodeNotPickedUp for NotConsumed and CodeTimeout for TimedOut.
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
func (c *Client) SendContract(ctx context.Context, k Contract, opts ...Option) (*ContractResult, error) {
	if k.Target == "" {
		return nil, &Error{Code: CodeInvalid, Msg: "a contract needs exactly one target"}
	}
	if k.From == "" {
		return nil, &Error{Code: CodeInvalid, Msg: "a contract needs a sender"}
	}
	spec := specOf(opts)
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
			res.Reply, res.Outcome = m, Completed
			if remoteError(m) != nil {
				res.Outcome = Failed
			}
			return res, nil
		}
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
		case <-w.final: // the top of the loop judges the answer
		case <-w.progress:
		case <-c.opts.Clock.After(next.Sub(now)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
