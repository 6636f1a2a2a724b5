// Package rawsend appends hand-built AGDX envelopes to a log, bypassing the
// send verbs that build them: the shared suites use it to craft what no verb
// sends (stream chunks out of order, replies carrying token usage).
package rawsend

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Envelope validates env, mints its record id from c's id source when it
// has none (a chunk keeps none), and appends it to topic as one record with
// content type ct, keyed by its conversation. It never signs.
func Envelope(ctx context.Context, c *runtime.Client, topic string, env *wire.Envelope, ct wire.ContentType) (runtime.Position, error) {
	if env.Record == nil && env.Kind != wire.KindChunk {
		id := c.IDs().NewID()
		env.Record = &id
	}
	if err := wire.Validate(env); err != nil {
		return runtime.Position{}, fmt.Errorf("rawsend: %w", err)
	}
	payload, err := env.Marshal()
	if err != nil {
		return runtime.Position{}, fmt.Errorf("rawsend: %w", err)
	}
	pos, err := c.Publish(ctx, topic, runtime.Outgoing{
		Key:     wire.PartitionKey(env.Conversation),
		Headers: wire.EnvelopeHeaders(env, ct),
		Payload: payload,
	})
	if err != nil {
		return runtime.Position{}, err
	}
	return pos[0], nil
}
