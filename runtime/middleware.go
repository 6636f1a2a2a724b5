package runtime

import "context"

// Middleware wraps every handler dispatch, for auth, metrics and tracing
// without touching handlers. Embed MiddlewareDefaults and write only the hook
// you need, so hooks added later break nobody.
type Middleware interface {
	// BeforeHandle runs once, in order, before the first attempt. An error
	// dead-letters the message as rejected and the handler never runs.
	BeforeHandle(ctx context.Context, m *Message) error
	// AfterHandle runs after every attempt with its result (nil on success)
	// and its one-based number, so a metrics hook sees every retry.
	AfterHandle(ctx context.Context, m *Message, err error, attempt int)
}

// MiddlewareDefaults implements Middleware with no-op hooks.
type MiddlewareDefaults struct{}

// BeforeHandle accepts every message.
func (MiddlewareDefaults) BeforeHandle(context.Context, *Message) error { return nil }

// AfterHandle does nothing.
func (MiddlewareDefaults) AfterHandle(context.Context, *Message, error, int) {}
