package runtime

import (
	"cmp"
	"context"
	"fmt"

	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// AgentOption adjusts an AgentConfig; NewAgent and the constructors lasergen
// generates take them.
type AgentOption func(*AgentConfig)

// WithTuning sets how the agent's consumer runs (AgentConfig.Tuning).
func WithTuning(t Tuning) AgentOption {
	return func(cfg *AgentConfig) { cfg.Tuning = t }
}

// WithCardPublished makes the agent publish its card (AgentConfig.Card) on
// topic, default agent.registry, when it starts, before it becomes ready,
// so a registry refreshed after Ready sees it.
func WithCardPublished(topic string) AgentOption {
	return func(cfg *AgentConfig) { cfg.CardTopic = cmp.Or(topic, TopicRegistry) }
}

// PublishCard publishes agent's card on topic (default agent.registry) as a
// status/card envelope, creating the topic when missing; key, when set,
// signs it.
func (c *Client) PublishCard(ctx context.Context, topic, agent string, card *wire.AgentCard, key *sign.Key) error {
	if err := card.Validate(); err != nil {
		return &Error{Code: CodeInvalid, Msg: "card of " + agent, Err: err}
	}
	body, err := card.Marshal()
	if err != nil {
		return &Error{Code: CodeCodec, Msg: "encode card of " + agent, Err: err}
	}
	return c.PublishStatus(ctx, topic, agent, wire.OperationCard, body, key)
}

// PublishStatus publishes a status envelope with operation op from source on
// topic (default agent.registry), creating the topic when missing: the
// registry's cards and quarantine facts.
func (c *Client) PublishStatus(ctx context.Context, topic, source, op string, body []byte, key *sign.Key) error {
	topic = cmp.Or(topic, TopicRegistry)
	o := &outgoing{kind: wire.KindStatus, from: source, who: op + " source", body: body, spec: sendSpec{operation: op}, ct: wire.ContentCBOR, key: key}
	env, err := c.envelope(o)
	if err != nil {
		return err
	}
	if err := c.t.EnsureTopics(ctx, 1, topic); err != nil {
		return fmt.Errorf("publish %s: %w", op, err)
	}
	if _, err := c.send(ctx, topic, o, env); err != nil {
		return fmt.Errorf("publish %s: %w", op, err)
	}
	return nil
}
