package bridge

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Publish appends env to topic through client's producer, keyed by its
// conversation so a conversation's records share a partition: the raw path
// for the records no send verb of the runtime builds (chunk streams outside
// a handler, state events, task statuses a bridge writes). A missing record
// id is minted; env must pass wire.Validate.
func Publish(ctx context.Context, client *runtime.Client, topic string, env *wire.Envelope, ct wire.ContentType) (runtime.Position, error) {
	if env.Record == nil && env.Kind != wire.KindChunk {
		id := client.IDs().NewID()
		env.Record = &id
	}
	if err := wire.Validate(env); err != nil {
		return runtime.Position{}, fmt.Errorf("bridge: publish %s on %s: %w", env.Kind, topic, err)
	}
	payload, err := env.Marshal()
	if err != nil {
		return runtime.Position{}, fmt.Errorf("bridge: encode %s: %w", env.Kind, err)
	}
	pos, err := client.Producer().Publish(ctx, topic, runtime.Outgoing{
		Key:     wire.PartitionKey(env.Conversation),
		Headers: wire.EnvelopeHeaders(env, ct),
		Payload: payload,
	})
	if err != nil {
		return runtime.Position{}, fmt.Errorf("bridge: publish %s on %s: %w", env.Kind, topic, err)
	}
	return pos[0], nil
}
