package runtime

import (
	"cmp"
	"context"
	"fmt"

	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// publishCard publishes agent's card on topic (default agent.registry) as a
// status/card envelope, creating the topic when missing; key, when set,
// signs it. Package registry publishes cards the same way.
func (c *Client) publishCard(ctx context.Context, topic, agent string, card *wire.AgentCard, key *sign.Key) error {
	if err := card.Validate(); err != nil {
		return &Error{Code: CodeInvalid, Msg: "card of " + agent, Err: err}
	}
	body, err := card.Marshal()
	if err != nil {
		return &Error{Code: CodeCodec, Msg: "encode card of " + agent, Err: err}
	}
	topic = cmp.Or(topic, TopicRegistry)
	if err := c.t.EnsureTopics(ctx, 1, topic); err != nil {
		return fmt.Errorf("publish %s: %w", wire.OperationCard, err)
	}
	msg := Out{Kind: wire.KindStatus, Topic: topic, From: agent, Body: body}
	if _, err := c.Send(ctx, msg, WithOperation(wire.OperationCard), WithSigningKey(key)); err != nil {
		return fmt.Errorf("publish %s: %w", wire.OperationCard, err)
	}
	return nil
}
