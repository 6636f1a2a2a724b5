package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/lasergo/laser/wire"
)

// DeadLetter describes one message the consumer parked in the dead-letter
// topic, as reported to Tuning.DeadLetterSink.
type DeadLetter struct {
	// Message is the poison message, nil when the record did not decode.
	Message *Message
	// Capsule is what was (or should have been) published.
	Capsule *wire.DeadLetter
	// Cause is why the message was dead-lettered (decode error, handler error, ...).
	Cause error
	// PublishErr is nil when the capsule reached the dead-letter topic; when
	// it is set the consumer stops with the source offset uncommitted.
	PublishErr error
	// Position is where the capsule landed when PublishErr is nil.
	Position Position
}

// errDeadLetterPublish wraps a failed dead-letter publish; it stops the
// consumer so the source offset stays uncommitted and the record returns.
var errDeadLetterPublish = errors.New("dead-letter publish failed")

// deadLetter parks a decoded message: its provenance travels on, pointed at
// the poison record, with the deadline cleared so a deadline-aware DLQ reader
// does not drop the capsule for the very deadline that killed the original.
// The capsule's detail is the reference's short text, made encodable (see
// capsuleDetail); cause, when set, is the full error and goes to the log and
// the sink.
func (c *Consumer) deadLetter(ctx context.Context, m *Message, reason wire.DeadLetterReason, attempts int, detail string, cause error) error {
	if cause == nil {
		cause = errors.New(detail)
	}
	detail = capsuleDetail(detail)
	capsule := &wire.DeadLetter{
		Source:   c.logPosition(m.Position),
		Reason:   reason,
		Attempts: uint32(attempts),
		Detail:   &detail,
		Payload:  m.Payload,
	}
	prov := m.Provenance
	parent := wire.MessageID{Partition: m.Position.Partition, Offset: m.Position.Offset}
	prov.CausalParent = &parent
	prov.Deadline = nil
	return c.publishDeadLetter(ctx, m, prov, capsule, cause)
}

// deadLetterUndecodable parks a record whose headers or envelope did not
// decode. It keeps the record's conversation when its
// gen_ai.conversation.id header names one, as the reference does, so the
// capsule lands in the conversation's partition of the dead-letter topic
// beside the conversation's other capsules; only without one does it get a
// fresh conversation.
func (c *Consumer) deadLetterUndecodable(ctx context.Context, rec *Incoming, cause error) error {
	capsule := &wire.DeadLetter{
		Source:   c.logPosition(rec.Position),
		Reason:   wire.ReasonDecodeFailed,
		Attempts: 0,
		Payload:  rec.Payload,
	}
	parent := wire.MessageID{Partition: rec.Partition, Offset: rec.Offset}
	conv, ok := wire.HeaderConversation(rec.Headers)
	if !ok {
		conv = c.ids.NewID()
	}
	prov := wire.Provenance{Conversation: conv, CausalParent: &parent}
	return c.publishDeadLetter(ctx, nil, prov, capsule, cause)
}

func (c *Consumer) publishDeadLetter(ctx context.Context, m *Message, prov wire.Provenance, capsule *wire.DeadLetter, cause error) error {
	pos, err := c.sendDeadLetter(ctx, prov, capsule)
	source := Position{Partition: capsule.Source.PartitionID, Offset: capsule.Source.Offset}
	if err != nil {
		err = fmt.Errorf("%w for %s (%s): %w", errDeadLetterPublish, source, capsule.Reason, err)
		c.log.Error("dead-letter publish failed; leaving the source offset uncommitted",
			"source", source.String(), "reason", capsule.Reason.String(), "error", err)
	} else {
		c.log.Warn("dead-lettered message", "source", source.String(),
			"reason", capsule.Reason.String(), "attempts", capsule.Attempts, "cause", cause)
	}
	if m != nil {
		m.parked, m.parkCause = capsule, cause
	}
	if c.cfg.DeadLetterSink != nil {
		c.cfg.DeadLetterSink(ctx, DeadLetter{Message: m, Capsule: capsule, Cause: cause, PublishErr: err, Position: pos})
	}
	return err
}

func (c *Consumer) sendDeadLetter(ctx context.Context, prov wire.Provenance, capsule *wire.DeadLetter) (Position, error) {
	payload, err := capsule.Marshal()
	if err != nil {
		return Position{}, fmt.Errorf("encode capsule: %w", err)
	}
	headers, err := prov.Headers()
	if err != nil {
		// Provenance that cannot be re-encoded (an oversized or odd value that
		// still decoded) must not turn into a message that can never be parked:
		// keep only what locates the original.
		c.log.Warn("dead-letter provenance does not re-encode, keeping conversation and causal parent only", "error", err)
		minimal := wire.Provenance{Conversation: prov.Conversation, CausalParent: prov.CausalParent}
		if headers, err = minimal.Headers(); err != nil {
			return Position{}, fmt.Errorf("encode capsule headers: %w", err)
		}
	}
	headers = append(headers, wire.Header{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(wire.ContentCBOR))})
	if k := c.cfg.SigningKey; k != nil {
		by := c.cfg.Agent
		if by == "" {
			by = c.cfg.Group
		}
		sig, err := k.SignDetached(DeadLetterDomain, []byte(c.cfg.DeadLetterTopic), []byte(by), payload)
		if err != nil {
			return Position{}, fmt.Errorf("sign capsule: %w", err)
		}
		headers = append(headers,
			wire.Header{Key: HeaderDeadLetterBy, Value: wire.StringValue(by)},
			wire.Header{Key: HeaderDeadLetterSignature, Value: wire.HeaderValue{Kind: wire.HeaderKindRaw, Data: sig}})
	}
	// Parking is bookkeeping, not an effect of the agent: no gate may stop
	// it, or a refused message could never leave its partition.
	pos, err := c.prod.publishOut(ctx, c.cfg.DeadLetterTopic, []Outgoing{{Key: prov.PartitionKey(), Headers: headers, Payload: payload}})
	if err != nil {
		return Position{}, err
	}
	return pos[0], nil
}

func (c *Consumer) logPosition(p Position) wire.LogPosition {
	return wire.LogPosition{StreamID: c.streamID, TopicID: c.topicID, PartitionID: p.Partition, Offset: p.Offset}
}
