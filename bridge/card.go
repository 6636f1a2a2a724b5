package bridge

import (
	"fmt"

	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/wire"
)

// anyObject is the input schema of an operation known only from its card:
// the card names the skill, not its Go types.
const anyObject = `{"type":"object","description":"the operation's input, as JSON"}`

// CardOperations describes the skills of a registry card as operations, for
// agents a bridge knows only from the registry: the input is any JSON
// object (its content type as the card says), a skill with an output is a
// request answered on replyTopic, one without a command. Generated
// <Agent>Operations carry the real schemas; use them when you can link the
// agent's package.
func CardOperations(card *wire.AgentCard, topic, replyTopic string) []operation.Info {
	ops := make([]operation.Info, 0, len(card.Capabilities))
	for _, c := range card.Capabilities {
		op := operation.Info{
			Agent: card.Name, Name: c.SkillID, Kind: operation.Command,
			Doc:   fmt.Sprintf("Skill %q of agent %s, from its registry card.", c.SkillID, card.Name),
			Topic: topic, ContentType: contentType(c.Input), InputSchema: anyObject,
		}
		if c.Output != nil {
			op.Kind, op.ReplyTopic = operation.Request, replyTopic
		}
		ops = append(ops, op)
	}
	return ops
}

// contentType is the body encoding a card's content reference names: CBOR
// for CBOR, JSON for everything else a bridge can build from JSON.
func contentType(ref *wire.ContentReference) wire.ContentType {
	if ref != nil && ref.SchemaID == nil && ref.ContentType == wire.ContentCBOR {
		return wire.ContentCBOR
	}
	return wire.ContentJSON
}
