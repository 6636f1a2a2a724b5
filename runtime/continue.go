package runtime

import (
	"context"

	"github.com/lasergo/laser/wire"
)

// A typed call made inside a handler (a generated client's method, Call,
// Tell, CallStream) continues the handled message's
// conversation: the handler passes its *Ctx, or a context derived from it,
// as the call's context, and the call goes out in the handled conversation
// with the handled record as its causal parent. So a reply, a follow-up
// command and the events a handler emits stay on one partition, in order,
// and a reader can tell what caused them. An explicit WithConversation in
// the call's options still picks another conversation.

// handledKey is the context key under which a *Ctx finds itself in the
// contexts derived from it.
type handledKey struct{}

// Ctx.Value (ctx.go) answers handledKey with the Ctx itself, so a context
// derived from it (a timeout, a span) still says which message is handled.

// handledBy returns the handler context ctx is or derives from, or nil.
func handledBy(ctx context.Context) *Ctx {
	c, _ := ctx.Value(handledKey{}).(*Ctx)
	return c
}

// continuing returns the options that continue, under ctx, the conversation
// of the message being handled (none outside a handler), followed by opts.
func continuing(ctx context.Context, opts []Option) []Option {
	c := handledBy(ctx)
	if c == nil || c.msg == nil {
		return opts
	}
	m := c.msg
	at := c.c.logPosition(m.Position)
	var record *wire.ID
	if m.Envelope != nil {
		record = m.Envelope.Record
	}
	return append([]Option{WithConversation(m.Provenance.Conversation), causedBy(record, at)}, opts...)
}

// causedBy records the message that caused a send: its record id (AGDX
// only) and its position in the log.
func causedBy(record *wire.ID, at wire.LogPosition) Option {
	return option{optCause, func(s *sendSpec) { s.cause, s.causeAt = record, &at }}
}
