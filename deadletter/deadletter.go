// Package deadletter works on the records a consumer parked on its
// dead-letter topic: Verify checks that a capsule was signed by the
// consumer that parked it, and Redrive republishes the original record the
// capsule points at. It is what `laser dlq` runs.
package deadletter

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/internal/effectgate"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Verify checks that rec, read from dead-letter topic dlqTopic,
// is a capsule signed by the consumer that parked it: the signature over
// the topic, the consumer's agent id and the capsule bytes verifies with a
// key enrolled in keys and valid at the record's broker time, and the key's
// principal may send as that agent (sign.Registry.SourceAllowed). It returns the decoded capsule. A forged capsule
// would make a redrive republish whatever record it names with the
// operator's credentials and a fresh idempotency key.
func Verify(keys *sign.Registry, dlqTopic string, rec *runtime.Incoming) (sign.Verified, *wire.DeadLetter, error) {
	capsule, err := wire.DecodeDeadLetter(rec.Payload)
	if err != nil {
		return sign.Verified{}, nil, &runtime.Error{Code: runtime.CodeCodec, Msg: "not a dead-letter capsule", Err: err}
	}
	sigValue, _ := rec.Headers.Get(runtime.HeaderDeadLetterSignature)
	byValue, hasBy := rec.Headers.Get(runtime.HeaderDeadLetterBy)
	by, byErr := byValue.AsString()
	if len(sigValue.Data) == 0 || !hasBy || byErr != nil {
		return sign.Verified{}, nil, &runtime.Error{Code: runtime.CodeSignature, Msg: "capsule is not signed", Err: sign.ErrUnsigned}
	}
	verified, err := keys.VerifyDetached(sigValue.Data, rec.Timestamp, runtime.DeadLetterDomain, []byte(dlqTopic), []byte(by), rec.Payload)
	if err == nil {
		if !keys.SourceAllowed(verified.Principal, by) {
			err = fmt.Errorf("%w: capsule parked by %q, signed by %q", sign.ErrSourceMismatch, by, verified.Principal)
		}
	}
	if err != nil {
		return sign.Verified{}, nil, &runtime.Error{Code: runtime.CodeSignature, Msg: "capsule signature", Err: err}
	}
	return verified, capsule, nil
}

// Redrive republishes the original record a dead-letter capsule
// points at to sourceTopic, the topic it was read from, and returns where
// the copy landed. Headers and payload are copied verbatim, except that a
// plain message's idempotency key becomes KEY/redrive/PARTITION-OFFSET: the
// copy passes dedup, while redriving the same capsule twice still dedups
// (an AGDX envelope's key lives inside the envelope and is left as is).
// The copy is keyed by the original's conversation when it decodes.
//
// A capsule whose numeric stream and topic ids are not sourceTopic's (a
// forged or foreign capsule), whose original record is gone, or whose
// payload is not that record's, is refused with a CodeInvalid error. This
// does not authenticate the capsule: check it with Verify first.
// Client c's gate admits the copy first, as an effect.Publish with
// operation runtime.OperationRedrive.
func Redrive(ctx context.Context, c *runtime.Client, sourceTopic string, capsule *wire.DeadLetter) (runtime.Position, error) {
	src := capsule.Source
	stream, topic, err := c.Transport().TopicIDs(ctx, sourceTopic)
	if err != nil {
		return runtime.Position{}, fmt.Errorf("source topic %s: %w", sourceTopic, err)
	}
	if src.StreamID != stream || src.TopicID != topic {
		return runtime.Position{}, &runtime.Error{Code: runtime.CodeInvalid, Msg: fmt.Sprintf("capsule source %s is not topic %s (%d/%d): name the topic its record was read from", src, sourceTopic, stream, topic)}
	}
	recs, err := c.Transport().ReadRange(ctx, sourceTopic, src.PartitionID, src.Offset, 1)
	if err != nil {
		return runtime.Position{}, err
	}
	if len(recs) == 0 || recs[0].Offset != src.Offset {
		return runtime.Position{}, &runtime.Error{Code: runtime.CodeInvalid, Msg: fmt.Sprintf("the original record %d:%d is no longer in %s", src.PartitionID, src.Offset, sourceTopic)}
	}
	orig := recs[0]
	if !bytes.Equal(orig.Payload, capsule.Payload) {
		return runtime.Position{}, &runtime.Error{Code: runtime.CodeInvalid, Msg: fmt.Sprintf("the record at %d:%d of %s is not the one the capsule parked (its payload differs)", src.PartitionID, src.Offset, sourceTopic)}
	}
	headers := orig.Headers.Decode()
	if v, ok := headers.Get(wire.HeaderIdempotencyKey); ok {
		if key, err := v.AsString(); err == nil {
			headers.Set(wire.HeaderIdempotencyKey, wire.StringValue(redriveKey(key, src)))
		}
	}
	key := ""
	if m, err := runtime.DecodeRecord(sourceTopic, &orig, ^uint64(0)); err == nil {
		key = m.Provenance.PartitionKey()
	}
	redrive := effectgate.As(ctx, effect.Effect{Kind: effect.Publish, Operation: runtime.OperationRedrive})
	pos, err := c.Publish(redrive, sourceTopic, runtime.Outgoing{Key: key, Headers: headers, Payload: orig.Payload})
	if err != nil {
		return runtime.Position{}, err
	}
	return pos[0], nil
}

// redriveKey is the idempotency key a redriven plain message carries: the
// original key re-keyed by the source position, as the reference does.
func redriveKey(key string, src wire.LogPosition) string {
	return key + "/redrive/" + strconv.FormatUint(uint64(src.PartitionID), 10) + "-" + strconv.FormatUint(src.Offset, 10)
}
