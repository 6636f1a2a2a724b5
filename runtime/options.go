package runtime

import (
	"time"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// The options of the send verbs come in families, so that a verb cannot be
// given an option it does not honour (connect-go's ClientOption and
// HandlerOption split is the model). Each family is honoured by the verbs
// named in its doc comment and is a member of the families below it:
//
//   - Option (WithContentType) refines every message, answers included;
//   - SendOption refines every message a caller starts: an event, a
//     command or a request (WithIdempotencyKey, WithOperation,
//     WithConversation, WithFence, WithMetadata);
//   - CommandOption refines a command or a request (WithDeadline: an event
//     has no deadline);
//   - RequestOption refines a request only (WithTimeout, WithReplyTopic);
//   - StreamOption refines a stream request only (WithStreamBuffer);
//   - ReplyOption refines an answer or a plain message: only Option.
//
// WithOptions bundles SendOptions into one.

// StreamOption refines a stream request (Client.RequestStream,
// CallStream).
type StreamOption interface{ applyStream(*sendSpec) }

// RequestOption refines a request (Client.Request, Ctx.Request, Call) or a
// stream request.
type RequestOption interface {
	StreamOption
	applyRequest(*sendSpec)
}

// CommandOption refines a command (Client.SendCommand, Tell,
// Client.SendContract, Ctx.Send) or a request.
type CommandOption interface {
	RequestOption
	applyCommand(*sendSpec)
}

// SendOption refines an event (Client.Emit, Ctx.Emit, EmitEvent), a
// command or a request.
type SendOption interface {
	CommandOption
	applyEvent(*sendSpec)
}

// ReplyOption refines an answer (Ctx.Respond, Ctx.RespondInput,
// Ctx.RespondValue) or a plain message from a client (Client.SendPlain).
type ReplyOption interface{ applyReply(*sendSpec) }

// Option refines every kind of message.
type Option interface {
	SendOption
	ReplyOption
}

// everyOption is an Option.
type everyOption func(*sendSpec)

func (o everyOption) applyStream(s *sendSpec)  { o(s) }
func (o everyOption) applyRequest(s *sendSpec) { o(s) }
func (o everyOption) applyCommand(s *sendSpec) { o(s) }
func (o everyOption) applyEvent(s *sendSpec)   { o(s) }
func (o everyOption) applyReply(s *sendSpec)   { o(s) }

// sendOption is a SendOption.
type sendOption func(*sendSpec)

func (o sendOption) applyStream(s *sendSpec)  { o(s) }
func (o sendOption) applyRequest(s *sendSpec) { o(s) }
func (o sendOption) applyCommand(s *sendSpec) { o(s) }
func (o sendOption) applyEvent(s *sendSpec)   { o(s) }

// commandOption is a CommandOption.
type commandOption func(*sendSpec)

func (o commandOption) applyStream(s *sendSpec)  { o(s) }
func (o commandOption) applyRequest(s *sendSpec) { o(s) }
func (o commandOption) applyCommand(s *sendSpec) { o(s) }

// requestOption is a RequestOption only.
type requestOption func(*sendSpec)

func (o requestOption) applyStream(s *sendSpec)  { o(s) }
func (o requestOption) applyRequest(s *sendSpec) { o(s) }

// streamOption is a StreamOption only.
type streamOption func(*sendSpec)

func (o streamOption) applyStream(s *sendSpec) { o(s) }

// specOf applies opts, each through apply: the method of the family the
// verb takes (SendOption.applyEvent, CommandOption.applyCommand, ...).
func specOf[O any](opts []O, apply func(O, *sendSpec)) sendSpec {
	var s sendSpec
	for _, o := range opts {
		apply(o, &s)
	}
	return s
}

type sendSpec struct {
	contentType  wire.ContentType
	hasCT        bool
	idem         string
	deadline     time.Time
	operation    string
	replyTopic   string
	timeout      time.Duration
	conversation *wire.ID
	fence        *uint64
	metadata     wire.Metadata
	streamBuffer *int
	// effect is the effect kind a gate sees when the verb's own does not
	// say it (WithEffectKind).
	effect effect.Kind
	// cause and causeAt name the message that caused this one (see
	// continuing).
	cause   *wire.ID
	causeAt *wire.LogPosition
	// accept, when set, is which signer a reply must come from
	// (WithAnswerFrom); key signs the send instead of the client's
	// (WithSigningKey).
	accept func(sign.Verified) bool
	key    *sign.Key
}

// WithOptions bundles opts into one option that applies them in order, so a
// set of options shared by many sends is built once and passed as one; a
// generated client holds the options given to its constructor this way.
func WithOptions(opts ...SendOption) SendOption {
	return sendOption(func(s *sendSpec) {
		for _, o := range opts {
			o.applyEvent(s)
		}
	})
}

// WithContentType says what the body is (the agdx.ct header).
func WithContentType(ct wire.ContentType) Option {
	return everyOption(func(s *sendSpec) { s.contentType, s.hasCT = ct, true })
}

// WithIdempotencyKey lets the receiver drop redeliveries and duplicates of
// the same effect (1 to 64 bytes).
func WithIdempotencyKey(key string) SendOption { return sendOption(func(s *sendSpec) { s.idem = key }) }

// WithDeadline makes the receiver dead-letter the message when it picks it
// up after t. A request without it carries the end of its wait (see
// WithTimeout).
func WithDeadline(t time.Time) CommandOption {
	return commandOption(func(s *sendSpec) { s.deadline = t })
}

// WithOperation names the operation a message asks for or reports (the
// envelope's operation field), which generated dispatchers route on.
func WithOperation(op string) SendOption { return sendOption(func(s *sendSpec) { s.operation = op }) }

// WithConversation sends within an existing conversation instead of a new
// one (a handler's Ctx sends within the handled one by default).
func WithConversation(id wire.ConversationID) SendOption {
	return sendOption(func(s *sendSpec) { s.conversation = &id })
}

// WithFence attaches a fence token: the receiver drops messages of its
// conversation whose fence is below the highest it accepted.
func WithFence(fence uint64) SendOption { return sendOption(func(s *sendSpec) { s.fence = &fence }) }

// WithMetadata attaches an envelope metadata entry.
func WithMetadata(key string, v wire.Value) SendOption {
	return sendOption(func(s *sendSpec) {
		s.metadata.Set(key, v)
	})
}

// WithReplyTopic says where a request's replies are read. Default
// agent.responses.
func WithReplyTopic(topic string) RequestOption {
	return requestOption(func(s *sendSpec) { s.replyTopic = topic })
}

// WithTimeout bounds a request's wait for its answer. Default 30 s. The
// wait's end (or the context's deadline, when earlier) is also the command's
// deadline unless WithDeadline sets one, so an agent that picks the request
// up after nobody waits any more dead-letters it instead of acting on it.
func WithTimeout(d time.Duration) RequestOption {
	return requestOption(func(s *sendSpec) { s.timeout = d })
}

// WithSigningKey signs the event, command or request with key, so that
// readers under a verifier count it (a workflow's journal records).
func WithSigningKey(key *sign.Key) SendOption {
	return sendOption(func(s *sendSpec) { s.key = key })
}

// WithAnswerFrom narrows whose answer a request takes under the client's
// Verifier: a verified answer counts only when accept holds for its signer
// (principal and key kind); any other is ignored and the wait goes on, so a
// peer's answer cannot end the wait for the one that matters. Without a
// Verifier nothing is authenticated and it has no effect.
func WithAnswerFrom(accept func(sign.Verified) bool) RequestOption {
	return requestOption(func(s *sendSpec) { s.accept = accept })
}

func (s *sendSpec) ct(def wire.ContentType) wire.ContentType {
	if s.hasCT {
		return s.contentType
	}
	return def
}

func (s *sendSpec) reply() string {
	if s.replyTopic != "" {
		return s.replyTopic
	}
	return TopicResponses
}

func (s *sendSpec) wait() time.Duration {
	if s.timeout > 0 {
		return s.timeout
	}
	return DefaultRequestTimeout
}
