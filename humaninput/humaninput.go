// Package humaninput pauses an agent for a human: it asks for input or an
// approval on agent.human_input and waits for the answer.
//
// A request is an AGDX command on the topic under a fresh correlation; the
// answer is a response (the human's input or approval) or an error (a
// refusal) with that correlation, published on the same topic by default.
// So the topic alone tells what is pending: commands without an answer
// whose deadline (the end of the asker's wait) has not passed, which
// Pending lists and `laser approvals` shows. Under a client verifier
// only verified answers count; an unverified one is ignored.
package humaninput

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// ErrRefused reports a request the human refused; the error is a *Refused.
var ErrRefused = errors.New("humaninput: refused")

// Refused is a refusal with the human's reason.
type Refused struct {
	By     string
	Reason string
}

func (e *Refused) Error() string {
	return fmt.Sprintf("humaninput: refused by %s: %s", e.By, e.Reason)
}

// Is makes errors.Is(err, ErrRefused) hold.
func (e *Refused) Is(target error) bool { return target == ErrRefused }

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
	// Timeout bounds the wait. Default runtime.DefaultRequestTimeout.
	Timeout time.Duration
}

// Ask publishes req and waits for the answer: the body of a response, a
// *Refused (matching ErrRefused) for an error answer, or an error matching
// runtime.ErrTimeout when no (verified) answer arrives in time.
func Ask(ctx context.Context, c *runtime.Client, req Request) ([]byte, error) {
	topic := or(req.Topic, runtime.TopicHumanInput)
	opts := []runtime.RequestOption{runtime.WithReplyTopic(or(req.ReplyTopic, topic))}
	if req.Conversation != (wire.ID{}) {
		opts = append(opts, runtime.WithConversation(req.Conversation))
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = runtime.DefaultRequestTimeout
	}
	// The request carries the end of the wait as its deadline, so Pending
	// stops listing it once nobody waits for the answer.
	opts = append(opts, runtime.WithTimeout(timeout), runtime.WithDeadline(c.Clock().Now().Add(timeout)))
	m, err := c.Request(ctx, runtime.Command{Topic: topic, From: req.From, Target: req.Approver, Body: req.Prompt}, opts...)
	var remote *runtime.RemoteError
	if errors.As(err, &remote) {
		reason := remote.Message
		if reason == "" {
			reason = DefaultReason
		}
		return nil, &Refused{By: remote.From, Reason: reason}
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

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Answer answers the pending request req on topic (default
// agent.human_input) as agent from: with decision as the response body, or
// with a refusal when refuse is set (decision is then the reason). key,
// when set, signs the answer, which an asker with a verifier requires.
func Answer(ctx context.Context, c *runtime.Client, topic, from string, req *runtime.Message, refuse bool, decision []byte, key *sign.Key) error {
	a := runtime.Answer{From: from, Body: decision, Key: key}
	if refuse {
		reason := string(decision)
		if reason == "" {
			reason = DefaultReason
		}
		a.Error = &wire.ErrorBody{Code: wire.ErrorUnauthorized, Message: &reason}
	}
	if _, err := c.Answer(ctx, or(topic, runtime.TopicHumanInput), req, a); err != nil {
		return fmt.Errorf("humaninput: answer: %w", err)
	}
	return nil
}

// Pending returns the requests on topic (default agent.human_input) that
// have no answer yet and whose asker still waits (their deadline has not
// passed), oldest first per partition.
func Pending(ctx context.Context, t runtime.Transport, topic string) ([]*runtime.Message, error) {
	return PendingAt(ctx, t, topic, time.Now())
}

// PendingAt is Pending judged at now: a request whose deadline is before
// now is no longer pending, since its asker stopped waiting.
func PendingAt(ctx context.Context, t runtime.Transport, topic string, now time.Time) ([]*runtime.Message, error) {
	topic = or(topic, runtime.TopicHumanInput)
	nowMicros := uint64(now.UnixMicro())
	var asks []*runtime.Message
	answered := map[wire.ID]bool{}
	_, err := logscan.Topic(ctx, t, topic, nil, func(rec *runtime.Incoming) {
		m, err := runtime.DecodeRecord(topic, rec, 0)
		if err != nil || m.Envelope == nil || m.Envelope.Correlation == nil {
			return
		}
		switch m.Envelope.Kind {
		case wire.KindCommand:
			asks = append(asks, m)
		case wire.KindResponse, wire.KindError:
			answered[*m.Envelope.Correlation] = true
		}
	})
	if err != nil {
		return nil, fmt.Errorf("humaninput: %w", err)
	}
	var out []*runtime.Message
	for _, m := range asks {
		if d := m.Envelope.DeadlineMicros; d != nil && *d < nowMicros {
			continue
		}
		if !answered[*m.Envelope.Correlation] {
			out = append(out, m)
		}
	}
	return out, nil
}
