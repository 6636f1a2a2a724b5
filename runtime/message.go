package runtime

import (
	"github.com/lasergo/laser/wire"
	"sync/atomic"
)

// Message is one record delivered to a handler, decoded.
//
// The consumer allocates the messages of a batch in arrays of up to 32, so
// a Message kept after its handler returned keeps the others of its array,
// and the bytes their payloads alias, from being collected: copy what you
// keep.
type Message struct {
	// Topic the record was read from.
	Topic string
	// Position of the record in its topic (its own offset, never the batch's).
	Position Position
	// Timestamp is the broker's append time in Unix microseconds.
	Timestamp uint64
	// Provenance is the routing context: read from the string headers of a
	// plain message, or synthesized from the envelope of an AGDX message so
	// filters, dedup and deadlines treat both shapes alike.
	Provenance wire.Provenance
	// Envelope is the decoded AGDX envelope, nil for a plain message.
	Envelope *wire.Envelope
	// ContentType is the agdx.ct header when HasContentType is set.
	ContentType    wire.ContentType
	HasContentType bool
	// Headers are the record's user headers as they travelled, read in place
	// (Get, All; Decode for a list of one's own to edit).
	Headers wire.EncodedHeaders
	// Payload is the record payload verbatim (the encoded envelope for AGDX).
	Payload []byte
	// VerifiedPrincipal is the principal whose enrolled key signed the
	// envelope, set only when the consumer verifies signatures.
	VerifiedPrincipal string

	// observed is the signature context the record's headers bind (agdx.ct
	// and agdx.av), compared with the signed one by the signature gate.
	observed wire.SignatureContext

	// Storage the pointers above and in Provenance point into, so decoding a
	// record allocates the message once rather than a value per field.
	ctCode uint8
	avCode uint32
	fence  uint64
	hctx   Ctx
	// streamed is set once the handler published part of a streamed
	// answer, after which a failure is not retried (see Consumer.handle).
	streamed atomic.Bool

	// parked and parkCause are the capsule and cause when the message was
	// dead-lettered, for record observers.
	parked    *wire.DeadLetter
	parkCause error
}

// plainMessage is a Message with room for the text of its provenance
// (sender, target, idempotency key, correlation), so decoding a plain
// record allocates one object rather than two when the text fits, as it
// usually does.
type plainMessage struct {
	m    Message
	text [64]byte
}

// agdxMessage is a Message with room for its envelope, so decoding an AGDX
// record allocates one object rather than three; plain messages do not
// carry the room.
type agdxMessage struct {
	m      Message
	envBuf wire.EnvelopeBuffer
	// corrText holds the text of the envelope's correlation id, which
	// Provenance.Correlation views (written once, never changed).
	corrText [wire.IDTextLen]byte
}

// Body returns the task body: the envelope's body for an AGDX message,
// otherwise the payload, so a handler need not care how it was reached.
func (m *Message) Body() []byte {
	if m.Envelope != nil {
		return m.Envelope.Body
	}
	return m.Payload
}

// Correlation returns the correlation id text (the envelope's correlation in
// Crockford form for AGDX, agdx.corr for plain messages), or "".
func (m *Message) Correlation() string { return m.Provenance.Correlation }

// Operation returns the envelope's operation, or "" for plain messages and
// envelopes without one.
func (m *Message) Operation() string {
	if m.Envelope != nil && m.Envelope.Operation != nil {
		return *m.Envelope.Operation
	}
	return ""
}

// Kind returns the envelope kind, or "" for a plain message.
func (m *Message) Kind() wire.Kind {
	if m.Envelope != nil {
		return m.Envelope.Kind
	}
	return ""
}
