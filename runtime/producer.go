package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/internal/effectgate"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// producerConfig is how a producer publishes: ClientConfig.PublishAttempts
// and PublishBackoff, and the client's middleware that intercept sends.
type producerConfig struct {
	attempts     int
	backoff      time.Duration
	interceptors []SendInterceptor
}

// producer appends raw records to the log, retrying transient transport
// errors and surfacing the rest: the raw path under every send verb of
// Client and Ctx, which build the records, and under Client.Publish.
type producer struct {
	t     Transport
	opts  producerConfig
	clock clock.Clock
	ids   clock.IDSource
	log   *slog.Logger
	// gate and client govern every effect (see EffectGate); gate is nil
	// when the client has none.
	gate   EffectGate
	client *Client
	// claim is the agent's claims a handler's view binds (see
	// Client.bound), for effects under a context that carries none.
	claim effect.Claims
}

// newProducer returns a producer over t timing its backoff on clock, minting
// record ids from ids and warning on log.
func newProducer(t Transport, opts producerConfig, clock clock.Clock, ids clock.IDSource, log *slog.Logger) *producer {
	if opts.attempts <= 0 {
		opts.attempts = 4
	}
	if opts.backoff <= 0 {
		opts.backoff = 50 * time.Millisecond
	}
	return &producer{t: t, opts: opts, clock: clock, ids: ids, log: log}
}

// Publish appends raw records to topic, retrying transient transport
// errors, for records no send verb builds (extra headers, replayed or
// crafted envelopes). The client's gate admits each record first, as an
// effect.Publish with the record's topic, payload and provenance; when it
// refuses one, nothing is published.
func (c *Client) Publish(ctx context.Context, topic string, records ...Outgoing) ([]Position, error) {
	p := c.prod
	if !p.governed(ctx) {
		return p.publishOut(ctx, topic, records)
	}
	return p.publishGoverned(ctx, effectgate.Proto(ctx), topic, records, p.publishOut)
}

// publishGoverned admits each record as proto, then publishes the admitted
// records with send and tells the gate how it went.
func (p *producer) publishGoverned(ctx context.Context, proto effect.Effect, topic string, records []Outgoing,
	send func(ctx context.Context, topic string, records []Outgoing) ([]Position, error),
) ([]Position, error) {
	records = slices.Clone(records)
	var gate EffectGate
	admitted := make([]*effect.Effect, 0, len(records))
	for i := range records {
		e := proto
		e.Topic, e.Body = topic, records[i].Payload
		if enc, err := records[i].Headers.Encode(); err != nil {
			// Headers the transport will refuse anyway: no provenance to add.
		} else if prov, err := wire.DecodeProvenance(enc); err == nil {
			e.Conversation = prov.Conversation
			e.Agent = cmp.Or(e.Agent, prov.Agent)
			e.Target = cmp.Or(e.Target, prov.Target)
		}
		g, err := p.admit(ctx, &e)
		if err != nil {
			p.effected(ctx, gate, err, admitted...)
			return nil, err
		}
		gate = cmp.Or(gate, g)
		admitted = append(admitted, &e)
		if err := noMetadata(&e); err != nil {
			p.effected(ctx, gate, err, admitted...)
			return nil, err
		}
		records[i].Payload = e.Body
	}
	pos, err := send(ctx, topic, records)
	p.effected(ctx, gate, err, admitted...)
	return pos, err
}

// noMetadata refuses an effect on a record without an envelope to which
// the gate gave metadata: it has nowhere to go, and dropping it would
// publish something other than what the gate admitted.
func noMetadata(e *effect.Effect) error {
	if len(e.Metadata) > 0 {
		return &Error{Code: CodeInvalid, Msg: fmt.Sprintf("the gate set metadata on a %s effect, which has no envelope to carry it", e.Kind)}
	}
	return nil
}

// publishOut publishes records through the interceptors, ungoverned: the
// send verbs call it once the gate admitted their effect.
func (p *producer) publishOut(ctx context.Context, topic string, records []Outgoing) ([]Position, error) {
	if len(p.opts.interceptors) > 0 {
		return p.intercepted(ctx, topic, records)
	}
	return p.publish(ctx, topic, records)
}

func (p *producer) publish(ctx context.Context, topic string, records []Outgoing) ([]Position, error) {
	delay := p.opts.backoff
	for attempt := 1; ; attempt++ {
		pos, err := p.t.Publish(ctx, topic, records...)
		if err == nil {
			return pos, nil
		}
		if !errors.Is(err, ErrTransient) || attempt >= p.opts.attempts || ctx.Err() != nil {
			return nil, fmt.Errorf("publish to %s: %w", topic, err)
		}
		p.log.Warn("publish failed, retrying", "topic", topic, "attempt", attempt, "error", err)
		if err := sleep(ctx, p.clock, delay); err != nil {
			return nil, fmt.Errorf("publish to %s: %w", topic, err)
		}
		delay *= 2
	}
}

// sendPlain publishes payload as a plain message whose provenance travels
// as string headers, keyed by its conversation, once the gate admitted it
// as an effect of kind (effect.Plain when ""); extra headers are appended.
func (p *producer) sendPlain(ctx context.Context, topic string, prov *wire.Provenance, payload []byte, kind effect.Kind, extra ...wire.Header) (Position, error) {
	headers, err := prov.Headers()
	if err != nil {
		return Position{}, &Error{Code: CodeInvalid, Msg: "provenance headers", Err: err}
	}
	headers = append(headers, extra...)
	var gate EffectGate
	var e *effect.Effect
	if p.governed(ctx) {
		e = &effect.Effect{Kind: cmp.Or(kind, effect.Plain), Topic: topic, Agent: prov.Agent, Target: prov.Target, Conversation: prov.Conversation, Body: payload}
		if gate, err = p.admit(ctx, e); err != nil {
			return Position{}, err
		}
		if err := noMetadata(e); err != nil {
			p.effected(ctx, gate, err, e)
			return Position{}, err
		}
		payload = e.Body
	}
	pos, err := p.publishOut(ctx, topic, []Outgoing{{Key: prov.PartitionKey(), Headers: headers, Payload: payload}})
	if e != nil {
		p.effected(ctx, gate, err, e)
	}
	if err != nil {
		return Position{}, err
	}
	return pos[0], nil
}

// sendEnvelope validates env, mints its record id when missing (chunks keep
// none), has the gate admit it as an effect of kind (derived from env's kind
// when ""), signs it last when key is set (binding the agdx.ct and agdx.av
// headers, and so any body the gate replaced, and the destination topic and
// issued-at in signed metadata, see sign.Bind), and publishes it keyed by its
// conversation.
func (p *producer) sendEnvelope(ctx context.Context, topic string, env *wire.Envelope, ct wire.ContentType, key *sign.Key, kind effect.Kind) (Position, error) {
	if env.Record == nil && env.Kind != wire.KindChunk {
		id := p.ids.NewID()
		env.Record = &id
	}
	if !p.governed(ctx) {
		return p.publishEnvelope(ctx, topic, env, ct, key)
	}
	e := envelopeEffect(topic, env, kind, key != nil)
	gate, err := p.admit(ctx, e)
	if err != nil {
		return Position{}, err
	}
	env.Body, env.Metadata = e.Body, e.Metadata
	pos, err := p.publishEnvelope(ctx, topic, env, ct, key)
	p.effected(ctx, gate, err, e)
	return pos, err
}

// publishEnvelope binds, validates, signs and publishes env once admitted.
func (p *producer) publishEnvelope(ctx context.Context, topic string, env *wire.Envelope, ct wire.ContentType, key *sign.Key) (Position, error) {
	if key != nil {
		sign.Bind(env, topic, micros(p.clock.Now()))
	}
	if err := wire.Validate(env); err != nil {
		return Position{}, &Error{Code: CodeInvalid, Msg: "envelope", Err: err}
	}
	if key != nil {
		code, version := uint8(ct), wire.AgentOpVersion
		if err := key.Sign(env, &wire.SignatureContext{ContentType: &code, AgentVersion: &version}); err != nil {
			return Position{}, &Error{Code: CodeSignature, Msg: "sign envelope", Err: err}
		}
	}
	payload, err := env.Marshal()
	if err != nil {
		return Position{}, &Error{Code: CodeCodec, Msg: "encode envelope", Err: err}
	}
	pos, err := p.publishOut(ctx, topic, []Outgoing{{
		Key:     wire.PartitionKey(env.Conversation),
		Headers: wire.EnvelopeHeaders(env, ct),
		Payload: payload,
	}})
	if err != nil {
		return Position{}, err
	}
	return pos[0], nil
}
