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

// Interceptor is the wrapping form of middleware, in the spirit of
// connect-go's interceptors and river's middleware: Intercept runs around
// each attempt of the handler and calls next to run the rest of the chain
// and the handler. It may pass next a different Ctx (see Ctx.WithContext)
// so the handler runs under, say, a span's context, and it sees the
// attempt's error. A Middleware listed in Tuning.Middleware (or
// ClientOptions.Middleware) that also implements Interceptor wraps the
// attempt, outermost first; the BeforeHandle and AfterHandle hooks of every
// middleware run innermost, just around the handler, as one interceptor.
type Interceptor interface {
	Intercept(c *Ctx, next func(*Ctx) error) error
}

// InterceptorFunc adapts a function to Middleware and Interceptor, so a
// wrapping middleware can be written inline.
type InterceptorFunc func(c *Ctx, next func(*Ctx) error) error

// Intercept calls f.
func (f InterceptorFunc) Intercept(c *Ctx, next func(*Ctx) error) error { return f(c, next) }

// BeforeHandle accepts every message.
func (InterceptorFunc) BeforeHandle(context.Context, *Message) error { return nil }

// AfterHandle does nothing.
func (InterceptorFunc) AfterHandle(context.Context, *Message, error, int) {}

// beforeHandleError is a BeforeHandle refusal travelling out of the attempt
// chain; the consumer dead-letters the message as rejected without counting
// an attempt, as it always did.
type beforeHandleError struct{ err error }

func (e *beforeHandleError) Error() string { return e.err.Error() }
func (e *beforeHandleError) Unwrap() error { return e.err }

// attemptChain builds the chain one attempt runs: every Interceptor in
// order (the first outermost), then the hooks of every middleware around
// the handler: each BeforeHandle in order before the first attempt (the
// first refusal ends it, and no AfterHandle runs), each AfterHandle in order
// after every attempt with its result.
func attemptChain(mws []Middleware, handler func(*Ctx) error) func(*Ctx) error {
	next := handler
	if len(mws) > 0 {
		next = func(c *Ctx) error {
			if c.attempt == 1 {
				for _, mw := range mws {
					if err := mw.BeforeHandle(c, c.msg); err != nil {
						return &beforeHandleError{err: err}
					}
				}
			}
			err := handler(c)
			for _, mw := range mws {
				mw.AfterHandle(c, c.msg, err, c.attempt)
			}
			return err
		}
	}
	for i := len(mws) - 1; i >= 0; i-- {
		if ic, ok := mws[i].(Interceptor); ok {
			inner := next
			next = func(c *Ctx) error { return ic.Intercept(c, inner) }
		}
	}
	return next
}
