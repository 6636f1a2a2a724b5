package runtime

import (
	"context"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/internal/effectgate"
	"github.com/lasergo/laser/wire"
)

// EffectGate decides before every effect of the runtime: every send verb,
// raw Client.Publish, memory writes, workflow step dispatches, fan-out
// branches, and what bridges report through Client.Govern. A nil error lets
// the effect run (with e's Body and Metadata, which the gate may have
// replaced); any error stops it and nothing is published. Package govern
// implements it. Unlike a SendInterceptor it may refuse.
//
// A gate that is also an EffectListener hears how each effect it admitted
// ended.
type EffectGate interface {
	Admit(ctx context.Context, c *Client, e *effect.Effect) error
}

// gateKey is the context key under which a handler's Ctx answers its
// agent's gate.
type gateKey struct{}

// agentGate is what a handler's Ctx answers for gateKey: its agent's gate
// override (nil for the client's) and the class its directive declares.
type agentGate struct {
	gate  EffectGate
	claim effect.Claims
}

// Govern runs the gate over an effect the caller performs itself (a bridge
// calling out, say): nil means go ahead, with e's Body and Metadata as the
// gate left them. The runtime does not see how that effect ends, so the
// gate hears it as done once admitted.
func (c *Client) Govern(ctx context.Context, e *effect.Effect) error {
	gate, err := c.prod.admit(ctx, e)
	if err == nil {
		c.prod.effected(ctx, gate, nil, e)
	}
	return err
}

// governed reports whether a gate may govern an effect under ctx, so the
// ungoverned path builds no Effect.
func (p *producer) governed(ctx context.Context) bool {
	return p.gate != nil || ctx.Value(gateKey{}) != nil
}

// admit runs the gate that governs ctx over e: the handling agent's when it
// has one, else the client's; none for the gate's own effects (its
// evidence, its approval requests), which would otherwise govern
// themselves: only code inside this module can mark those (effectgate).
// It returns the gate that admitted e, nil when none did.
func (p *producer) admit(ctx context.Context, e *effect.Effect) (EffectGate, error) {
	if effectgate.Skipped(ctx) {
		return nil, nil
	}
	gate, claim := p.gate, p.claim
	if ag, ok := ctx.Value(gateKey{}).(agentGate); ok {
		if ag.gate != nil {
			gate = ag.gate
		}
		claim = ag.claim
	}
	if e.Claims.EffectClass == "" {
		e.Claims.EffectClass = claim.EffectClass
	}
	if e.Claims.DataClassification == "" {
		e.Claims.DataClassification = claim.DataClassification
	}
	if gate == nil {
		return nil, nil
	}
	return gate, gate.Admit(ctx, p.client, e)
}

// effected tells gate, when it listens, how the effects it admitted ended.
func (p *producer) effected(ctx context.Context, gate EffectGate, err error, effects ...*effect.Effect) {
	if o, ok := gate.(EffectListener); ok {
		for _, e := range effects {
			o.Effected(ctx, p.client, e, err)
		}
	}
}

// envelopeEffect is the effect of publishing env on topic.
func envelopeEffect(topic string, env *wire.Envelope, kind effect.Kind, signed bool) *effect.Effect {
	if kind == "" {
		kind = effect.Kind(env.Kind)
	}
	e := &effect.Effect{Kind: kind, Topic: topic, Agent: string(env.Source), Conversation: env.Conversation, Body: env.Body, Metadata: env.Metadata, Signed: signed}
	if env.Operation != nil {
		e.Operation = *env.Operation
	}
	if env.Target != nil {
		e.Target = string(*env.Target)
	}
	if v, ok := env.Metadata.Get(wire.MetaPurpose).AsStr(); ok {
		e.Claims.Purpose = v
	}
	if v, ok := env.Metadata.Get(wire.MetaDataClassification).AsStr(); ok {
		e.Claims.DataClassification = v
	}
	return e
}

// WithClaims returns a copy of c whose effects carry claims (the classes a
// handler declares; lasergen's effect= and data= keys), in place of the
// agent's for each class claims sets.
func (c *Ctx) WithClaims(claims effect.Claims) *Ctx {
	cp := *c
	cp.claims = claims
	return &cp
}

// WithEffectKind names the kind of effect a send performs when the verb
// alone does not say it (a workflow step, a fan-out branch), so a gate sees
// it as such.
func WithEffectKind(kind effect.Kind) Option {
	return option{optEffectKind, func(s *sendSpec) { s.effect = kind }}
}
