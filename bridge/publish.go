package bridge

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Publish appends env to topic through client's producer, keyed by its
// conversation so a conversation's records share a partition: the raw path
// for the records no send verb of the runtime builds (chunk streams outside
// a handler, state events, task statuses a bridge writes). A missing record
// id is minted; env must pass wire.Validate.
func Publish(ctx context.Context, client *runtime.Client, topic string, env *wire.Envelope, ct wire.ContentType) (runtime.Position, error) {
	return PublishSigned(ctx, client, topic, env, ct, nil)
}

// PublishSigned is Publish with env signed by key (bound to topic and the
// client's clock, as the runtime signs) when key is set: the records a
// bridge writes and later replays must verify like any other when its
// client verifies.
func PublishSigned(ctx context.Context, client *runtime.Client, topic string, env *wire.Envelope, ct wire.ContentType, key *sign.Key) (runtime.Position, error) {
	if env.Record == nil && env.Kind != wire.KindChunk {
		id := client.IDs().NewID()
		env.Record = &id
	}
	if key != nil {
		sign.Bind(env, topic, uint64(client.Clock().Now().UnixMicro()))
	}
	if err := wire.Validate(env); err != nil {
		return runtime.Position{}, fmt.Errorf("bridge: publish %s on %s: %w", env.Kind, topic, err)
	}
	if key != nil {
		code, version := uint8(ct), wire.AgentOpVersion
		if err := key.Sign(env, &wire.SignatureContext{ContentType: &code, AgentVersion: &version}); err != nil {
			return runtime.Position{}, fmt.Errorf("bridge: sign %s for %s: %w", env.Kind, topic, err)
		}
	}
	payload, err := env.Marshal()
	if err != nil {
		return runtime.Position{}, fmt.Errorf("bridge: encode %s: %w", env.Kind, err)
	}
	pos, err := client.Publish(ctx, topic, runtime.Outgoing{
		Key:     wire.PartitionKey(env.Conversation),
		Headers: wire.EnvelopeHeaders(env, ct),
		Payload: payload,
	})
	if err != nil {
		return runtime.Position{}, fmt.Errorf("bridge: publish %s on %s: %w", env.Kind, topic, err)
	}
	return pos[0], nil
}
