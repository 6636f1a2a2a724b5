// Package effectgate marks the contexts whose effects skip the runtime's
// EffectGate. It is internal so that only the gate's own code (package
// govern, recording its evidence and asking its approvals) can mark one: a
// handler outside the module cannot bypass the gate.
package effectgate

import (
	"context"

	"github.com/lasergo/laser/effect"
)

// ungovernedKey marks a context whose effects skip the gate.
type ungovernedKey struct{}

// Without returns ctx under which effects skip the gate.
func Without(ctx context.Context) context.Context {
	return context.WithValue(ctx, ungovernedKey{}, true)
}

// Skipped reports whether effects under ctx skip the gate.
func Skipped(ctx context.Context) bool {
	return ctx.Value(ungovernedKey{}) != nil
}

// asKey carries the effect a raw publish performs (see As).
type asKey struct{}

// As returns ctx under which a raw publish (runtime.Client.Publish) is
// governed as proto, with each record's topic, payload and provenance
// filled in, instead of as an effect.Publish: a memory write, a redrive.
// It is internal so that only this module's packages name the effect a
// raw record performs; a caller outside cannot relabel its publishes.
func As(ctx context.Context, proto effect.Effect) context.Context {
	return context.WithValue(ctx, asKey{}, proto)
}

// Proto returns the effect As set on ctx, else an effect.Publish.
func Proto(ctx context.Context) effect.Effect {
	if e, ok := ctx.Value(asKey{}).(effect.Effect); ok {
		return e
	}
	return effect.Effect{Kind: effect.Publish}
}
