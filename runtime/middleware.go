package runtime

import "context"

// Middleware is every hook the runtime offers around handling and sending,
// listed in one place. A value is middleware when it implements
// Middleware: its BeforeHandle and AfterHandle hooks run around every
// handler dispatch. It may implement, in addition, any of the interfaces
// below, each of which embeds Middleware, so only a Middleware can be one:
//
//   - Interceptor wraps each attempt of the handler;
//   - ConsumerObserver is handed the consumer once, to sample its state,
//     and wraps the processing of every record it takes, dropped and
//     parked ones included;
//   - SendInterceptor wraps every publish of a client;
//   - RequestInterceptor wraps every request/reply call of a client.
//
// Install middleware in ConsumerConfig.Middleware or AgentConfig.Middleware
// (one consumer or agent) or ClientConfig.Middleware (every consumer on the
// client, then its sends and requests). The runtime finds the extra interfaces by type assertion
// on each listed Middleware; to have the compiler check that a type
// implements the one you mean, assert it in your package, e.g.
// var _ runtime.SendInterceptor = (*myTracer)(nil). Embed
// MiddlewareDefaults and write only the hooks you need, so hooks added
// later break nobody.
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
// attempt's error. A Middleware listed in ConsumerConfig.Middleware (or
// ClientConfig.Middleware) that also implements Interceptor wraps the
// attempt, outermost first; the BeforeHandle and AfterHandle hooks of every
// middleware run innermost, just around the handler, as one interceptor.
type Interceptor interface {
	Middleware
	Intercept(c *Ctx, next func(*Ctx) error) error
}

// ConsumerObserver is implemented by middleware that watches a consumer:
// tracing and metrics. A Middleware in ConsumerConfig.Middleware (or
// ClientConfig.Middleware) that implements it is used by each consumer it
// is installed on.
//
// ObserveConsumer is called once, when the consumer is built, so the
// observer can sample its state (queue depth, lag).
//
// ObserveRecord sees every record the consumer takes, whatever becomes of
// it, including the records gates drop or the decoder parks, which never
// reach a handler. It wraps the processing of one record: it must call
// next exactly once, on its own goroutine before it returns, with the
// context the gates, the middleware and the handler should run under, and
// once next returns d says how the record ended. Observers nest in list
// order, the first outermost; one that wants only records writes
// ObserveConsumer empty, one that wants only the consumer calls next(ctx).
type ConsumerObserver interface {
	Middleware
	ObserveConsumer(c *Consumer)
	ObserveRecord(ctx context.Context, d *Delivery, next func(context.Context))
}

// SendInterceptor wraps a publish, in the shape of Client.Publish:
// InterceptSend gets the topic and the records, may add headers to them
// (trace context, say; copy a record's Headers before appending: the
// header slices are the caller's), and must call next exactly once with
// the records, which publishes them, retries included, and returns where
// they landed. It sees every publish of a client:
// sends, requests, replies, acks and dead letters. A Middleware in
// ClientConfig.Middleware that implements it wraps the client's publishes.
type SendInterceptor interface {
	Middleware
	InterceptSend(ctx context.Context, topic string, records []Outgoing, next func(context.Context, []Outgoing) ([]Position, error)) ([]Position, error)
}

// RequestInterceptor wraps a request/reply call of a Client (Client.Request
// and Call, from a handler too): the publish of the command and the wait
// for its answer. msg is the request's Out with its Topic resolved (a copy:
// changing it changes nothing sent); next returns what Request returns. A Middleware in
// ClientConfig.Middleware that implements it wraps the client's requests;
// the publish inside still passes the SendInterceptors.
type RequestInterceptor interface {
	Middleware
	InterceptRequest(ctx context.Context, msg *Out, next func(context.Context) (*Message, error)) (*Message, error)
}

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
