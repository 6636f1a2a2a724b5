// Package effectgate marks the contexts whose effects skip the runtime's
// EffectGate. It is internal so that only the gate's own code (package
// govern, recording its evidence and asking its approvals) can mark one: a
// handler outside the module cannot bypass the gate.
package effectgate

import "context"

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
