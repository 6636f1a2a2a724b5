package runtime

import (
	"context"
	"slices"
)

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
func (p *producer) intercepted(ctx context.Context, topic string, records []Outgoing) ([]Position, error) {
	s := &Send{Topic: topic, Records: slices.Clone(records)}
	next := func(ctx context.Context) error {
		pos, err := p.publish(ctx, topic, s.Records)
		s.Positions = pos
		return err
	}
	for i := len(p.opts.interceptors) - 1; i >= 0; i-- {
		si, inner := p.opts.interceptors[i], next
		next = func(ctx context.Context) error { return si.InterceptSend(ctx, s, inner) }
	}
	if err := next(ctx); err != nil {
		return nil, err
	}
	return s.Positions, nil
}

// RequestCall is one request as a RequestInterceptor sees it.
type RequestCall struct {
	Topic string // where the command goes
	Out   Out
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
	call := &RequestCall{Topic: msg.topic(), Out: msg}
	next := func(ctx context.Context) (*Message, error) { return c.awaitReply(ctx, msg, opts) }
	for i := len(ris) - 1; i >= 0; i-- {
		ri, inner := ris[i], next
		next = func(ctx context.Context) (*Message, error) { return ri.InterceptRequest(ctx, call, inner) }
	}
	return next(ctx)
}
