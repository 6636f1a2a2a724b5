package runtime

import (
	"context"
	"slices"
)

// sendInterceptors adds the middleware that intercept sends to list.
func sendInterceptors(list []SendInterceptor, mws []Middleware) []SendInterceptor {
	list = slices.Clone(list)
	for _, mw := range mws {
		if si, ok := mw.(SendInterceptor); ok {
			list = append(list, si)
		}
	}
	return list
}

// intercepted publishes records through the send interceptors.
func (p *producer) intercepted(ctx context.Context, topic string, records []Outgoing) ([]Position, error) {
	next := func(ctx context.Context, records []Outgoing) ([]Position, error) {
		return p.publish(ctx, topic, records)
	}
	for i := len(p.opts.interceptors) - 1; i >= 0; i-- {
		si, inner := p.opts.interceptors[i], next
		next = func(ctx context.Context, records []Outgoing) ([]Position, error) {
			return si.InterceptSend(ctx, topic, records, inner)
		}
	}
	// A copy of the slice, so an interceptor may replace a record's Headers
	// without touching the caller's records.
	pos, err := next(ctx, slices.Clone(records))
	if err != nil {
		return nil, err
	}
	return pos, nil
}

// requestInterceptors returns the client middleware that wraps requests.
func (c *Client) requestInterceptors() []RequestInterceptor {
	var list []RequestInterceptor
	for _, mw := range c.opts.Middleware {
		if ri, ok := mw.(RequestInterceptor); ok {
			list = append(list, ri)
		}
	}
	return list
}

func (c *Client) interceptedRequest(ctx context.Context, ris []RequestInterceptor, msg Out, opts []Option) (*Message, error) {
	// The interceptors see a copy with its topic resolved, so they read
	// where the command goes without knowing the kinds' defaults.
	seen := msg
	seen.Topic = msg.topic()
	next := func(ctx context.Context) (*Message, error) { return c.awaitReply(ctx, msg, opts) }
	for i := len(ris) - 1; i >= 0; i-- {
		ri, inner := ris[i], next
		next = func(ctx context.Context) (*Message, error) { return ri.InterceptRequest(ctx, &seen, inner) }
	}
	return next(ctx)
}
