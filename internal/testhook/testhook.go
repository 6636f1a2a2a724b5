// Package testhook lets package lasertest build a handler context, which
// package runtime keeps unexported so that test aids stay out of the
// package users build agents with. Package runtime sets the hook when it
// is initialised; nothing else writes it.
package testhook

import "context"

// NewCtx returns a *runtime.Ctx handling msg (a *runtime.Message) as agent,
// answering on respondTopic through client (a *runtime.Client). The types
// are any because this package cannot import runtime.
var NewCtx func(ctx context.Context, client, msg any, agent, respondTopic string) any
