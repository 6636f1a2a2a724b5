// Package lasertest holds test aids for agents built on package runtime: a
// clock that moves only when told to (ManualClock), a handler context
// outside any consumer (NewCtx), and Run, RunRequest and RunStream, which
// run one typed handler (a command, a request or a streaming handler) on
// one message and return what it sent, so a handler is unit-tested without
// a log. Dispatch drives a generated dispatcher (XHandler(impl)) by
// operation and input, so routing and decoding are tested too, and Answer
// reads its answer back as the caller's typed client would.
package lasertest

import (
	"context"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/internal/testhook"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// NewCtx returns a handler context for m outside any consumer: Respond,
// Send, Emit and the other calls of the Ctx publish through client as agent,
// answering on respondTopic ("" for an agent that answers nothing).
func NewCtx(ctx context.Context, client *runtime.Client, m *runtime.Message, agent, respondTopic string) *runtime.Ctx {
	return testhook.NewCtx(ctx, client, m, agent, respondTopic).(*runtime.Ctx)
}

// Handler describes the agent a handler runs as and the message it is given.
// The zero value is usable.
type Handler struct {
	// Agent is the handling agent's id. Default "agent".
	Agent string
	// RespondTopic is where the agent answers. Default agent.responses.
	RespondTopic string
	// From is the id of the agent that sent the message. Default "caller".
	From string
	// Topic is where the message arrived. Default agent.commands.
	Topic string
	// Operation is the operation the message asks for. Default none.
	Operation string
	// ContentType encodes the message body. Default JSON.
	ContentType wire.ContentType
	// Clock is the client's clock (a *ManualClock, say). Default the system
	// clock.
	Clock clock.Clock
}

// Sent is one record a handler published.
type Sent struct {
	Topic string
	// Message is the record decoded as a consumer reading it would see it.
	Message *runtime.Message
}

// Run runs h on one AGDX command carrying in (encoded in h's content type)
// and returns h's error and every record h published, in order. Nothing is
// published to a log: the records are kept in memory, so a handler that
// waits for an answer (Client.Request) times out.
func Run[In any](ctx context.Context, h Handler, handler func(*runtime.Ctx, In) error, in In) ([]Sent, error) {
	var sent []Sent
	err := h.run(ctx, in, &sent, func(c *runtime.Ctx) error { return handler(c, in) })
	return sent, err
}

// RunRequest is Run for a request handler: it returns the handler's answer
// as well. The answer is returned, not published: what a generated
// dispatcher would respond with is out.
func RunRequest[In, Out any](ctx context.Context, h Handler, handler func(*runtime.Ctx, In) (Out, error), in In) (out Out, sent []Sent, err error) {
	err = h.run(ctx, in, &sent, func(c *runtime.Ctx) error {
		var herr error
		out, herr = handler(c, in)
		return herr
	})
	return out, sent, err
}

// run builds the message carrying in, runs call on a context for it, and
// collects what was published into sent.
func (h Handler) run(ctx context.Context, in any, sent *[]Sent, call func(*runtime.Ctx) error) error {
	h = h.withDefaults()
	rec := &recorder{}
	client := runtime.NewClient(rec, runtime.ClientConfig{Clock: h.Clock})
	defer client.Close()
	m, err := h.message(client, rec, in)
	if err != nil {
		return err
	}
	mark := len(rec.since(0))
	herr := call(NewCtx(ctx, client, m, h.Agent, h.RespondTopic))
	for _, r := range rec.since(mark) {
		msg, err := runtime.DecodeRecord(r.topic, &r.Incoming, 0)
		if err != nil {
			return err
		}
		*sent = append(*sent, Sent{Topic: r.topic, Message: msg})
	}
	return herr
}

func (h Handler) withDefaults() Handler {
	if h.Agent == "" {
		h.Agent = "agent"
	}
	if h.RespondTopic == "" {
		h.RespondTopic = runtime.TopicResponses
	}
	if h.From == "" {
		h.From = "caller"
	}
	if h.Topic == "" {
		h.Topic = runtime.TopicCommands
	}
	if h.ContentType == 0 {
		h.ContentType = wire.ContentJSON
	}
	if h.Clock == nil {
		h.Clock = clock.System{}
	}
	return h
}

// message publishes the command carrying in to the recorder and decodes it
// back, so the handler sees a message exactly as a consumer would.
func (h Handler) message(client *runtime.Client, rec *recorder, in any) (*runtime.Message, error) {
	body, err := runtime.EncodeBody(in, h.ContentType)
	if err != nil {
		return nil, err
	}
	opts := []runtime.Option{runtime.WithContentType(h.ContentType)}
	if h.Operation != "" {
		opts = append(opts, runtime.WithOperation(h.Operation))
	}
	cmd := runtime.Out{Topic: h.Topic, From: h.From, Target: h.Agent, Body: body}
	if _, err := client.Send(context.Background(), cmd, opts...); err != nil {
		return nil, err
	}
	all := rec.since(0)
	r := all[len(all)-1]
	return runtime.DecodeRecord(r.topic, &r.Incoming, 0)
}
