package runtime

import (
	"context"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// The optional methods the runtime looks for on what it is given. Each is
// found with a type assertion; an implementer asserts it at compile time,
// var _ runtime.SourceChecker = (*X)(nil), so a changed signature fails
// the build instead of being ignored.

// ChangeNotifier is a Subscription that can tell an idle consumer that
// records may have arrived (the embedded log's does), so it polls at once
// instead of at its next idle poll. Changed returns a channel that is
// closed at the next change; the consumer takes it before polling, then
// waits on it.
type ChangeNotifier interface {
	Changed() <-chan struct{}
}

// SourceChecker is a Verifier that decides which envelope sources a
// verified principal may sign for (*sign.Registry is one, with
// AllowSource). A Verifier without it binds every source to the principal
// of the same name.
type SourceChecker interface {
	CheckSource(v sign.Verified, env *wire.Envelope) error
}

// EffectListener is an EffectGate that hears how each effect it admitted
// ended: err is nil once the effect is on the log. A gate that recorded
// the admission records a failure too, so its evidence never says an
// effect ran that did not.
type EffectListener interface {
	Effected(ctx context.Context, c *Client, e *effect.Effect, err error)
}

// The implementations in this module (package sign cannot import the
// runtime, so its registry is asserted here).
var (
	_ SourceChecker  = (*sign.Registry)(nil)
	_ EffectListener = (*bothGates)(nil)
)
