package runtime

import (
	"context"
	"fmt"
	"strconv"

	"github.com/lasergo/laser/wire"
)

// RedriveDeadLetter republishes the original record a dead-letter capsule
// points at to sourceTopic, the topic it was read from, and returns where
// the copy landed. Headers and payload are copied verbatim, except that a
// plain message's idempotency key becomes KEY/redrive/PARTITION-OFFSET: the
// copy passes dedup, while redriving the same capsule twice still dedups
// (an AGDX envelope's key lives inside the envelope and is left as is).
// The copy is keyed by the original's conversation when it decodes.
//
// A capsule whose numeric stream and topic ids are not sourceTopic's (a
// forged or foreign capsule), or whose original record is gone, is refused
// with an ErrInvalid error.
func (c *Client) RedriveDeadLetter(ctx context.Context, sourceTopic string, capsule *wire.DeadLetter) (Position, error) {
	src := capsule.Source
	stream, topic, err := c.t.TopicIDs(ctx, sourceTopic)
	if err != nil {
		return Position{}, fmt.Errorf("source topic %s: %w", sourceTopic, err)
	}
	if src.StreamID != stream || src.TopicID != topic {
		return Position{}, &Error{Code: CodeInvalid, Msg: fmt.Sprintf("capsule source %s is not topic %s (%d/%d): name the topic its record was read from", src, sourceTopic, stream, topic)}
	}
	recs, err := c.t.ReadRange(ctx, sourceTopic, src.PartitionID, src.Offset, 1)
	if err != nil {
		return Position{}, err
	}
	if len(recs) == 0 || recs[0].Offset != src.Offset {
		return Position{}, &Error{Code: CodeInvalid, Msg: fmt.Sprintf("the original record %d:%d is no longer in %s", src.PartitionID, src.Offset, sourceTopic)}
	}
	orig := recs[0]
	headers := orig.Headers.Clone()
	if v, ok := headers.Get(wire.HeaderIdempotencyKey); ok {
		if key, err := v.AsString(); err == nil {
			headers.Set(wire.HeaderIdempotencyKey, wire.StringValue(RedriveKey(key, src)))
		}
	}
	key := ""
	if m, err := DecodeRecord(sourceTopic, &orig, ^uint64(0)); err == nil {
		key = m.Provenance.PartitionKey()
	}
	pos, err := c.t.Publish(ctx, sourceTopic, Outgoing{Key: key, Headers: headers, Payload: orig.Payload})
	if err != nil {
		return Position{}, err
	}
	return pos[0], nil
}

// RedriveKey is the idempotency key a redriven plain message carries: the
// original key re-keyed by the source position, as the reference does.
func RedriveKey(key string, src wire.LogPosition) string {
	return key + "/redrive/" + strconv.FormatUint(uint64(src.PartitionID), 10) + "-" + strconv.FormatUint(src.Offset, 10)
}
