package runtime

import (
	"cmp"
	"context"
	"slices"
)

// SendInterceptor wraps a publish: InterceptSend may add headers to the
// records (trace context, say) and must call next exactly once, which
// publishes them, retries included. It sees every publish of a Producer:
// sends, requests, replies, acks and dead letters. A Middleware in
// ClientOptions.Middleware that implements it wraps the client's publishes.
type SendInterceptor interface {
	InterceptSend(ctx context.Context, s *Send, next func(context.Context) error) error
}

// Send is one publish as a SendInterceptor sees it.
type Send struct {
	Topic string
	// Records are about to be published; an interceptor may replace their
	// Headers (copy before appending: the slices are the caller's).
	Records []Outgoing
	// Positions are where the records landed, once next returned nil.
	Positions []Position
}

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
func (p *Producer) intercepted(ctx context.Context, topic string, records []Outgoing) ([]Position, error) {
	s := &Send{Topic: topic, Records: slices.Clone(records)}
	next := func(ctx context.Context) error {
		pos, err := p.publish(ctx, topic, s.Records)
		s.Positions = pos
		return err
	}
	for i := len(p.opts.Interceptors) - 1; i >= 0; i-- {
		si, inner := p.opts.Interceptors[i], next
		next = func(ctx context.Context) error { return si.InterceptSend(ctx, s, inner) }
	}
	if err := next(ctx); err != nil {
		return nil, err
	}
	return s.Positions, nil
}

// RequestInterceptor wraps a request/reply call of a Client (Client.Request,
// and Ctx.Request in a handler): the publish of the command and the wait
// for its answer. next returns what Request returns. A Middleware in
// ClientOptions.Middleware that implements it wraps the client's requests;
// the publish inside still passes the SendInterceptors.
type RequestInterceptor interface {
	InterceptRequest(ctx context.Context, r *RequestCall, next func(context.Context) (*Message, error)) (*Message, error)
}

// RequestCall is one request as a RequestInterceptor sees it.
type RequestCall struct {
	Topic   string // where the command goes
	Command Command
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

func (c *Client) interceptedRequest(ctx context.Context, ris []RequestInterceptor, cmd Command, opts []RequestOption) (*Message, error) {
	call := &RequestCall{Topic: cmp.Or(cmd.Topic, TopicCommands), Command: cmd}
	next := func(ctx context.Context) (*Message, error) { return c.request(ctx, cmd, opts) }
	for i := len(ris) - 1; i >= 0; i-- {
		ri, inner := ris[i], next
		next = func(ctx context.Context) (*Message, error) { return ri.InterceptRequest(ctx, call, inner) }
	}
	return next(ctx)
}
