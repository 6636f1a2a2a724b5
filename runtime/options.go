package runtime

import (
	"fmt"
	"time"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Option refines one send: what its message says (WithOperation,
// WithContentType, WithMetadata, ...), how it is delivered (WithDeadline,
// WithIdempotencyKey, WithFence) and how a request waits (WithTimeout,
// WithReplyTopic, WithAnswerFrom, WithStreamBuffer). Every send verb of
// Client and Ctx takes the same Option type, but each uses only some: one
// that shapes the record and that the verb cannot honour (WithDeadline on
// an event, WithConversation on Ctx.Respond, WithSigningKey on a plain
// message) fails the send with CodeConfig before the effect gate is asked,
// rather than being dropped. A wait option on a send that waits for nothing
// (WithTimeout on Client.Send, WithStreamBuffer on Client.Request) is
// ignored, so the options a generated client holds for all its methods
// apply to each as far as it goes.
type Option interface{ apply(*sendSpec) }

// option is an Option: which one it is, and what it sets.
type option struct {
	which optionSet
	set   func(*sendSpec)
}

func (o option) apply(s *sendSpec) {
	o.set(s)
	s.given |= o.which
}

// optionSet is a set of options, one bit each: those a spec was given and
// those a verb uses.
type optionSet uint32

const (
	optContentType optionSet = 1 << iota
	optIdempotencyKey
	optDeadline
	optOperation
	optConversation
	optFence
	optMetadata
	optReplyTopic
	optTimeout
	optSigningKey
	optAnswerFrom
	optTaskState
	optStreamBuffer
	optEffectKind
	optCause // set by Call, Tell and CallStream from a handler (continuing)
)

// optionNames names each option bit, in bit order, for errors.
var optionNames = [...]string{"WithContentType", "WithIdempotencyKey", "WithDeadline", "WithOperation",
	"WithConversation", "WithFence", "WithMetadata", "WithReplyTopic", "WithTimeout", "WithSigningKey",
	"WithAnswerFrom", "WithTaskState", "WithStreamBuffer", "WithEffectKind", "the causing message"}

// The option sets verbs share: what an AGDX message carries, and how a
// request waits for its answer.
const (
	optsMessage = optContentType | optIdempotencyKey | optDeadline | optOperation | optConversation |
		optFence | optMetadata | optSigningKey | optEffectKind | optCause
	optsWait = optTimeout | optReplyTopic | optAnswerFrom
	// optsIdle are the wait options a verb that waits for nothing (or for
	// no stream) ignores.
	optsIdle = optsWait | optStreamBuffer
	// optsPlain is what a plain message's string headers carry (no
	// operation, metadata or signature) and its effect kind.
	optsPlain = optContentType | optIdempotencyKey | optDeadline | optConversation | optFence | optEffectKind
)

// uses is the one check of options against a verb: it refuses, with
// CodeConfig, the first option s was given that the verb does not use, so
// nothing is silently dropped and nothing fails after the gate admitted
// the send.
func (s *sendSpec) uses(verb string, used optionSet) error {
	extra := s.given &^ used
	if extra == 0 {
		return nil
	}
	name := "an option"
	for i, n := range optionNames {
		if extra&(1<<i) != 0 {
			name = n
			break
		}
	}
	return &Error{Code: CodeConfig, Msg: fmt.Sprintf("%s does not use %s", verb, name)}
}

// specOf applies opts in order.
func specOf(opts []Option) sendSpec {
	var s sendSpec
	for _, o := range opts {
		o.apply(&s)
	}
	return s
}

type sendSpec struct {
	// given is which options were applied (see uses).
	given        optionSet
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
	// state makes an answer a task status (WithTaskState).
	state *wire.TaskState
}

// WithContentType says what the body is (the agdx.ct header).
func WithContentType(ct wire.ContentType) Option {
	return option{optContentType, func(s *sendSpec) { s.contentType, s.hasCT = ct, true }}
}

// WithIdempotencyKey lets the receiver drop redeliveries and duplicates of
// the same effect (1 to 64 bytes).
func WithIdempotencyKey(key string) Option {
	return option{optIdempotencyKey, func(s *sendSpec) { s.idem = key }}
}

// WithDeadline makes the receiver dead-letter the message when it picks it
// up after t. A request without it carries the end of its wait (see
// WithTimeout).
func WithDeadline(t time.Time) Option {
	return option{optDeadline, func(s *sendSpec) { s.deadline = t }}
}

// WithOperation names the operation a message asks for or reports (the
// envelope's operation field), which generated dispatchers route on.
func WithOperation(op string) Option {
	return option{optOperation, func(s *sendSpec) { s.operation = op }}
}

// WithConversation sends within an existing conversation instead of a new
// one (a handler's Ctx sends within the handled one by default).
func WithConversation(id wire.ConversationID) Option {
	return option{optConversation, func(s *sendSpec) { s.conversation = &id }}
}

// WithFence attaches a fence token: the receiver drops messages of its
// conversation whose fence is below the highest it accepted.
func WithFence(fence uint64) Option { return option{optFence, func(s *sendSpec) { s.fence = &fence }} }

// WithMetadata attaches an envelope metadata entry.
func WithMetadata(key string, v wire.Value) Option {
	return option{optMetadata, func(s *sendSpec) {
		s.metadata.Set(key, v)
	}}
}

// WithReplyTopic says where a request's replies are read (default
// agent.responses) and where a handler's answer goes (default its agent's
// respond topic).
func WithReplyTopic(topic string) Option {
	return option{optReplyTopic, func(s *sendSpec) { s.replyTopic = topic }}
}

// WithTimeout bounds a request's wait for its answer. Default 30 s. The
// wait's end (or the context's deadline, when earlier) is also the command's
// deadline unless WithDeadline sets one, so an agent that picks the request
// up after nobody waits any more dead-letters it instead of acting on it.
func WithTimeout(d time.Duration) Option {
	return option{optTimeout, func(s *sendSpec) { s.timeout = d }}
}

// WithSigningKey signs the message with key, so that readers under a
// verifier count it (a workflow's journal records). Default: the handling
// agent's key for what a handler sends as its agent, else unsigned.
func WithSigningKey(key *sign.Key) Option {
	return option{optSigningKey, func(s *sendSpec) { s.key = key }}
}

// WithAnswerFrom narrows whose answer a request takes under the client's
// Verifier: a verified answer counts only when accept holds for its signer
// (principal and key kind); any other is ignored and the wait goes on, so a
// peer's answer cannot end the wait for the one that matters. Without a
// Verifier nothing is authenticated and it has no effect.
func WithAnswerFrom(accept func(sign.Verified) bool) Option {
	return option{optAnswerFrom, func(s *sendSpec) { s.accept = accept }}
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

// WithTaskState makes a handler's answer (Ctx.Respond) a task status in
// state instead of a response: a progress report such as input-required,
// after which the request stays open.
func WithTaskState(state wire.TaskState) Option {
	return option{optTaskState, func(s *sendSpec) { s.state = &state }}
}
