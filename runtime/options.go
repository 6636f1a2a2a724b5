package runtime

import (
	"time"

	"github.com/lasergo/laser/wire"
)

// SendOption refines a message sent by a Client or a handler's Ctx.
type SendOption func(*sendSpec)

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
}

func buildSpec(opts []SendOption) sendSpec {
	var s sendSpec
	for _, o := range opts {
		o(&s)
	}
	return s
}

// WithContentType says what the body is (the agdx.ct header).
func WithContentType(ct wire.ContentType) SendOption {
	return func(s *sendSpec) { s.contentType, s.hasCT = ct, true }
}

// WithIdempotencyKey lets the receiver drop redeliveries and duplicates of
// the same effect (1 to 64 bytes).
func WithIdempotencyKey(key string) SendOption { return func(s *sendSpec) { s.idem = key } }

// WithDeadline makes the receiver dead-letter the message when it picks it
// up after t.
func WithDeadline(t time.Time) SendOption { return func(s *sendSpec) { s.deadline = t } }

// WithOperation names the operation a command asks for (the envelope's
// operation field), which generated dispatchers route on.
func WithOperation(op string) SendOption { return func(s *sendSpec) { s.operation = op } }

// WithReplyTopic says where replies are read. Default agent.responses.
func WithReplyTopic(topic string) SendOption { return func(s *sendSpec) { s.replyTopic = topic } }

// WithTimeout bounds a request. Default 30 s.
func WithTimeout(d time.Duration) SendOption { return func(s *sendSpec) { s.timeout = d } }

// WithConversation sends within an existing conversation instead of a new one.
func WithConversation(id wire.ConversationID) SendOption {
	return func(s *sendSpec) { s.conversation = &id }
}

// WithFence attaches a fence token: the receiver drops messages of its
// conversation whose fence is below the highest it accepted.
func WithFence(fence uint64) SendOption { return func(s *sendSpec) { s.fence = &fence } }

// WithMetadata attaches an envelope metadata entry.
func WithMetadata(key string, v wire.Value) SendOption {
	return func(s *sendSpec) {
		if s.metadata == nil {
			s.metadata = wire.Metadata{}
		}
		s.metadata[key] = v
	}
}

// DefaultRequestTimeout bounds a request without WithTimeout.
const DefaultRequestTimeout = 30 * time.Second

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
