// Package humaninput pauses an agent for a human: it asks for input or an
// approval on agent.human_input and waits for the answer.
//
// A request is an AGDX command on the topic under a fresh correlation; the
// answer is a response (the human's input or approval) or an error (a
// refusal) with that correlation, published on the same topic by default.
// So the topic alone tells what is pending: commands without an answer
// whose deadline (the end of the asker's wait) has not passed, which
// List and Pending fold and `laser approvals` shows.
//
// Under a client verifier only a verified answer from an approver counts:
// the request's Approver, else one of its Approvers, else any holder of an
// operator key (an agent key alone approves nothing). Any other answer is
// ignored and the asker keeps waiting; List given the same verifier ignores
// it too, so nobody who can merely write the topic hides a request.
package humaninput

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// ErrRefused reports a request the human refused; the error is a *RefusedError.
var ErrRefused = errors.New("humaninput: refused")

// RefusedError is a refusal with the human's reason.
type RefusedError struct {
	By     string
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("humaninput: refused by %s: %s", e.By, e.Reason)
}

// Is makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// DefaultReason is the refusal reason when the error carries none.
const DefaultReason = "refused"

// Request is what to ask.
type Request struct {
	// Topic carries the request and, unless ReplyTopic says otherwise, its
	// answer. Default agent.human_input.
	Topic      string
	ReplyTopic string
	// From is the asking agent's id.
	From   string
	Prompt []byte
	// Conversation is the conversation the request belongs to (the handled
	// one when asking from a handler); zero starts a new one.
	Conversation wire.ID
	// Approver, when set, is the only principal whose answer counts under a
	// verifier.
	Approver string
	// Approvers, when Approver is empty, are the principals whose answers
	// count under a verifier; with neither, only an operator key's answer
	// counts. They travel with the request (metadata "approvers"), so List
	// judges its answers the same way.
	Approvers []string
	// Timeout bounds the wait. Default runtime.DefaultRequestTimeout.
	Timeout time.Duration
}

// MetaApprovers is the request metadata naming its Approvers, comma
// separated.
const MetaApprovers = "approvers"

// Ask publishes req and waits for the answer: the body of a response, a
// *RefusedError (matching ErrRefused) for an error answer, or an error matching
// runtime.CodeTimeout when no (verified) answer arrives in time. The request's
// deadline is the end of the wait: Timeout from now, or the end of ctx when
// that comes first.
func Ask(ctx context.Context, c *runtime.Client, req Request) ([]byte, error) {
	topic := cmp.Or(req.Topic, runtime.TopicHumanInput)
	opts := []runtime.Option{runtime.WithReplyTopic(cmp.Or(req.ReplyTopic, topic))}
	if req.Conversation != (wire.ID{}) {
		opts = append(opts, runtime.WithConversation(req.Conversation))
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = runtime.DefaultRequestTimeout
	}
	// The request carries the end of the wait as its deadline, so Pending
	// stops listing it once nobody waits for the answer.
	end := c.Clock().Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(end) {
		end = d
	}
	opts = append(opts, runtime.WithTimeout(timeout), runtime.WithDeadline(end))
	if req.Approver == "" {
		if len(req.Approvers) > 0 {
			opts = append(opts, runtime.WithMetadata(MetaApprovers, wire.StrValue(strings.Join(req.Approvers, ","))))
		}
		opts = append(opts, runtime.WithAnswerFrom(approves(req.Approvers)))
	}
	m, err := c.Request(ctx, runtime.Out{Topic: topic, From: req.From, Target: req.Approver, Body: req.Prompt}, opts...)
	var remote *runtime.Error
	if errors.As(err, &remote) && remote.Remote() {
		reason := remote.Msg
		if reason == "" {
			reason = DefaultReason
		}
		return nil, &RefusedError{By: remote.From, Reason: reason}
	}
	if err != nil {
		return nil, fmt.Errorf("humaninput: %w", err)
	}
	return m.Body(), nil
}

// Gate asks for approval from a handler, within the handled conversation,
// on agent.human_input.
func Gate(hc *runtime.Ctx, prompt []byte, timeout time.Duration) ([]byte, error) {
	return Ask(hc, hc.Client(), Request{From: hc.Agent(), Prompt: prompt, Conversation: hc.Message().Provenance.Conversation, Timeout: timeout})
}

// approves is the rule for an answer's signer when the request names no
// single Approver: one of approvers, or an operator key when there are none.
func approves(approvers []string) func(sign.Verified) bool {
	return func(v sign.Verified) bool {
		if len(approvers) == 0 {
			return v.Kind == sign.KindOperator
		}
		return slices.Contains(approvers, v.Principal)
	}
}

// Answer answers the pending request req on topic (default
// agent.human_input) as agent from: with decision as the response body, or
// with a refusal when refuse is set (decision is then the reason). key,
// when set, signs the answer, which an asker with a verifier requires.
func Answer(ctx context.Context, c *runtime.Client, topic, from string, req *runtime.Message, refuse bool, decision []byte, key *sign.Key) error {
	answer := runtime.Out{Kind: wire.KindResponse, Topic: cmp.Or(topic, runtime.TopicHumanInput), From: from, Body: decision, ReplyTo: req}
	if refuse {
		reason := string(decision)
		if reason == "" {
			reason = DefaultReason
		}
		body, err := (&wire.ErrorBody{Code: wire.ErrorUnauthorized, Message: &reason}).Marshal()
		if err != nil {
			return fmt.Errorf("humaninput: answer: %w", err)
		}
		answer.Kind, answer.Body = wire.KindError, body
	}
	if _, err := c.Send(ctx, answer, runtime.WithSigningKey(key)); err != nil {
		return fmt.Errorf("humaninput: answer: %w", err)
	}
	return nil
}
