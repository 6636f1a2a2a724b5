// Package fanout sends one request to every agent capable of a skill and
// gathers the replies by a policy: all of them, the first n, or whatever
// arrived by a deadline.
//
// Each branch is its own sub-conversation of the caller's conversation with
// a fresh correlation, targeted at one agent on a fixed inbox topic (the
// routing plain Iggy supports). Stragglers are cancelled when the policy is
// satisfied, and Send returns only after every branch has stopped, so
// nothing is left running here. Cancelling stops only the local wait: the
// command is already on the log, and a target may still act on it, unless
// it picks it up after the command's deadline (the end of the caller's
// context or of a BestEffort window, or an explicit WithDeadline), when it
// dead-letters it instead.
package fanout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Policy says when gathering stops.
type Policy struct {
	quorum int // < 0: all
	within time.Duration
}

// RequireAll waits for every branch, each bounded by its own request timeout.
func RequireAll() Policy { return Policy{quorum: -1} }

// Quorum stops once n branches succeeded and cancels the rest. Quorum(0)
// returns at once with nothing; n above the number of targets waits for all.
func Quorum(n int) Policy { return Policy{quorum: max(n, 0)} }

// BestEffort gathers what arrives within d and cancels the stragglers.
func BestEffort(d time.Duration) Policy { return Policy{quorum: -1, within: d} }

// Reply is one branch's answer.
type Reply struct {
	Agent   string
	Message *runtime.Message
}

// Failure is one branch's error: a remote error reply, a timeout, a publish
// failure.
type Failure struct {
	Agent string
	Err   error
}

// Gather is the outcome of a fan-out. A branch appears in exactly one of
// OK, Failures and Cancelled.
type Gather struct {
	OK       []Reply
	Failures []Failure
	// Cancelled lists the stragglers whose wait was stopped once the policy
	// was satisfied (or the caller's context ended) without an answer; a
	// branch that answered or failed meanwhile is in OK or Failures. The
	// target may still act on a cancelled branch's command.
	Cancelled []string
}

// Request is what to fan out.
type Request struct {
	// Skill selects the targets: every capable agent in the registry.
	Skill string
	// Topic is the inbox the targets listen on. Default agent.commands.
	Topic string
	// From is the sending agent's id.
	From string
	Body []byte
	// Within is the handled message whose conversation the branches are
	// sub-conversations of; nil makes each branch a fresh conversation.
	Within *runtime.Message
}

// Send refreshes reg, resolves every agent capable of req.Skill and sends
// each its own request, gathering by policy. opts apply to every branch
// (WithTimeout bounds each branch, WithReplyTopic says where replies come,
// WithDeadline overrides the branch commands' deadline).
// The error is only for what stops the fan-out itself: no capable agent
// (registry.ErrNoCapableAgent) or a registry read failure; per-branch
// errors are in Gather.Failures.
func Send(ctx context.Context, c *runtime.Client, reg *registry.Registry, req Request, policy Policy, opts ...runtime.Option) (*Gather, error) {
	if err := reg.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("fanout: %w", err)
	}
	targets, err := reg.Resolve(registry.AllCapable(req.Skill))
	if err != nil {
		return nil, fmt.Errorf("fanout: %w", err)
	}
	return SendTo(ctx, c, targets, req, policy, opts...)
}

// FromHandler fans out from a handler: the branches are sub-conversations
// of the handled one and come from the handling agent.
func FromHandler(hc *runtime.Ctx, reg *registry.Registry, skill, topic string, body []byte, policy Policy, opts ...runtime.Option) (*Gather, error) {
	return Send(hc, hc.Client(), reg, Request{Skill: skill, Topic: topic, From: hc.Agent(), Body: body, Within: hc.Message()}, policy, opts...)
}

type outcome struct {
	i   int
	msg *runtime.Message
	err error
}

// SendTo fans req out to the given agents (already resolved) and gathers by
// policy; see Send.
func SendTo(ctx context.Context, c *runtime.Client, targets []string, req Request, policy Policy, opts ...runtime.Option) (*Gather, error) {
	g := &Gather{}
	if policy.quorum == 0 || len(targets) == 0 {
		return g, nil
	}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var deadline <-chan time.Time
	if policy.within > 0 {
		deadline = c.Clock().After(policy.within)
	}
	// A branch's command expires when nobody waits for its answer any
	// more, so a target that picks it up later dead-letters it instead of
	// acting; an explicit WithDeadline in opts comes after and wins.
	base := branchDeadline(c, ctx, policy)
	results := make(chan outcome, len(targets))
	var wg sync.WaitGroup
	for i, agent := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each branch is an effect of its own; the caller's options may
			// name it otherwise (a workflow step).
			branch := append([]runtime.Option{runtime.WithEffectKind(effect.FanoutBranch)}, base...)
			m, err := c.Request(bctx, runtime.Out{Topic: req.Topic, From: req.From, Target: agent, Body: req.Body},
				append(append(branch, opts...), branchOptions(c, req.Within)...)...)
			results <- outcome{i: i, msg: m, err: err}
		}()
	}
	pending := len(targets)
	record := func(o outcome) {
		pending--
		switch {
		case o.err == nil:
			g.OK = append(g.OK, Reply{Agent: targets[o.i], Message: o.msg})
		case bctx.Err() != nil && (errors.Is(o.err, context.Canceled) || errors.Is(o.err, context.DeadlineExceeded)):
			g.Cancelled = append(g.Cancelled, targets[o.i]) // the wait was stopped, not answered
		default:
			g.Failures = append(g.Failures, Failure{Agent: targets[o.i], Err: o.err})
		}
	}
gather:
	for pending > 0 {
		select {
		case o := <-results:
			record(o)
			if o.err == nil && policy.quorum > 0 && len(g.OK) >= policy.quorum {
				break gather
			}
		case <-deadline:
			break gather
		case <-ctx.Done():
			break gather
		}
	}
	unfinished := pending
	cancel()
	wg.Wait()
	// Branches that answered or failed between the end of gathering and
	// their stop are reported as what they are, not as cancelled.
	for pending > 0 {
		record(<-results)
	}
	if err := ctx.Err(); err != nil && unfinished > 0 {
		return g, fmt.Errorf("fanout: %w", err)
	}
	return g, nil
}

// branchDeadline is the deadline option every branch's command carries:
// the end of the caller's context or of a BestEffort window, whichever
// comes first; none when neither bounds the wait.
func branchDeadline(c *runtime.Client, ctx context.Context, policy Policy) []runtime.Option {
	end, ok := ctx.Deadline()
	if policy.within > 0 {
		if w := c.Clock().Now().Add(policy.within); !ok || w.Before(end) {
			end, ok = w, true
		}
	}
	if !ok {
		return nil
	}
	return []runtime.Option{runtime.WithDeadline(end)}
}

// branchOptions puts a branch in a conversation of its own, recording the
// parent and root conversations when there is a handled one.
func branchOptions(c *runtime.Client, within *runtime.Message) []runtime.Option {
	conv := c.IDs().NewID()
	opts := []runtime.Option{runtime.WithConversation(conv)}
	if within == nil {
		return opts
	}
	parent := within.Provenance.Conversation
	root := parent
	if within.Provenance.RootConversation != nil {
		root = *within.Provenance.RootConversation
	}
	return append(opts,
		runtime.WithMetadata(wire.HeaderParentConversation, wire.StrValue(parent.String())),
		runtime.WithMetadata(wire.HeaderRootConversation, wire.StrValue(root.String())))
}
