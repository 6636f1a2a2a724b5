package govern

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lasergo/laser/internal/effectgate"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// TopicProposals carries proposals and their votes.
const TopicProposals = "agent.proposals"

// Operations of the records on TopicProposals.
const (
	OperationProposal = "proposal"
	OperationVote     = "vote"
)

// record is one governance record on its way to the log.
type record struct {
	topic        string
	key          string // partition key; "" keys by the conversation
	source       string
	operation    string
	conversation wire.ID
	body         any
	// encoded, when set, is the body already encoded (body is unused).
	encoded []byte
	// metadata rides in the envelope, covered by its signature.
	metadata wire.Metadata
	sign     *sign.Key
	// json encodes body as JSON (content type json) instead of CBOR.
	json bool
}

// appendRecord publishes r as an AGDX event (CBOR body, or JSON when r.json
// is set), signed when r has a key. It bypasses the gate: governance records are the gate's own
// effects, and governing them would recurse.
func appendRecord(ctx context.Context, c *runtime.Client, r record) error {
	body, ct := r.encoded, wire.ContentCBOR
	if r.json {
		ct = wire.ContentJSON
	}
	if body == nil {
		var err error
		if r.json {
			body, err = json.Marshal(r.body)
		} else {
			body, err = recordCBOR.Marshal(r.body)
		}
		if err != nil {
			return fmt.Errorf("govern: encode %s: %w", r.operation, err)
		}
	}
	source, err := wire.ParseAgentID(r.source)
	if err != nil {
		return fmt.Errorf("govern: %s source: %w", r.operation, err)
	}
	id := c.IDs().NewID()
	conv := r.conversation
	if conv.IsZero() {
		conv = c.IDs().NewID()
	}
	op := r.operation
	env := &wire.Envelope{Kind: wire.KindEvent, Record: &id, Conversation: conv, Source: source, Operation: &op, Body: body, Metadata: r.metadata}
	if r.sign != nil {
		// As the runtime's signer does: the signature covers the topic and
		// the issue time, so a signed vote or decision copied elsewhere is refused.
		sign.Bind(env, r.topic, uint64(c.Clock().Now().UnixMicro()))
	}
	if err := wire.Validate(env); err != nil {
		return fmt.Errorf("govern: %s: %w", r.operation, err)
	}
	if r.sign != nil {
		code, version := uint8(ct), wire.AgentOpVersion
		if err := r.sign.Sign(env, &wire.SignatureContext{ContentType: &code, AgentVersion: &version}); err != nil {
			return fmt.Errorf("govern: sign %s: %w", r.operation, err)
		}
	}
	payload, err := env.Marshal()
	if err != nil {
		return fmt.Errorf("govern: encode %s envelope: %w", r.operation, err)
	}
	key := r.key
	if key == "" {
		key = wire.PartitionKey(conv)
	}
	out := runtime.Outgoing{Key: key, Headers: wire.EnvelopeHeaders(env, ct), Payload: payload}
	if _, err := c.Publish(effectgate.Without(ctx), r.topic, out); err != nil {
		return fmt.Errorf("govern: append %s: %w", r.operation, err)
	}
	return nil
}
