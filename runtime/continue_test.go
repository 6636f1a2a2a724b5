package runtime_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// relay is a front agent whose handler calls the back agent with call (a
// typed call under the handler's context) and a back agent that reports
// every message it gets; handled reports the front's message.
type relay struct {
	c       *runtime.Client
	handled chan *runtime.Message
	got     chan *runtime.Message
}

func startRelay(t *testing.T, call func(ctx *runtime.Ctx, c *runtime.Client) error) *relay {
	t.Helper()
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(t.Context(), 4, "front.commands"); err != nil {
		t.Fatal(err)
	}
	r := &relay{c: newClient(t, log, clock.System{}, nil),
		handled: make(chan *runtime.Message, 4), got: make(chan *runtime.Message, 4)}
	runAgent(t, r.c, runtime.AgentConfig{ID: "back", Respond: runtime.TopicResponses,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			r.got <- ctx.Message()
			if ctx.Message().Kind() != wire.KindCommand {
				return nil
			}
			body, err := runtime.EncodeBody("done", wire.ContentCBOR)
			if err != nil {
				return err
			}
			return ctx.Respond(body, runtime.WithContentType(wire.ContentCBOR))
		})})
	runAgent(t, r.c, runtime.AgentConfig{ID: "front", Listen: "front.commands",
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			r.handled <- ctx.Message()
			return call(ctx, r.c)
		})})
	return r
}

// send starts the front's handler with one command in a conversation of its
// own.
func (r *relay) send(t *testing.T) {
	t.Helper()
	if _, err := r.c.Send(t.Context(), runtime.Out{Topic: "front.commands", From: "shop", Target: "front", Body: []byte("go")}); err != nil {
		t.Fatal(err)
	}
}

// checkContinued fails unless got is in handled's conversation with handled
// as its causal parent.
func checkContinued(t *testing.T, handled, got *runtime.Message) {
	t.Helper()
	if got.Provenance.Conversation != handled.Provenance.Conversation {
		t.Errorf("the call went out in conversation %s, want the handled %s", got.Provenance.Conversation, handled.Provenance.Conversation)
	}
	env := got.Envelope
	if env.Cause == nil || *env.Cause != *handled.Envelope.Record {
		t.Errorf("cause %v, want the handled record %v", env.Cause, handled.Envelope.Record)
	}
	if env.CauseAt == nil || env.CauseAt.PartitionID != handled.Position.Partition || env.CauseAt.Offset != handled.Position.Offset {
		t.Errorf("cause at %v, want the handled position %v", env.CauseAt, handled.Position)
	}
}

func TestATypedCallFromAHandlerContinuesTheHandledConversation(t *testing.T) {
	replied := make(chan string, 1)
	r := startRelay(t, func(ctx *runtime.Ctx, c *runtime.Client) error {
		// A context derived from the handler's, as code passing it on makes.
		sub, cancel := context.WithTimeout(ctx, waitLimit)
		defer cancel()
		out, err := runtime.Call[string](sub, c, runtime.Out{From: "front", Target: "back"}, "finish", wire.ContentCBOR, "go")
		replied <- out
		return err
	})
	r.send(t)
	handled, got := recv(t, r.handled, "the front's message"), recv(t, r.got, "the back's message")
	checkContinued(t, handled, got)
	if out := recv(t, replied, "the reply"); out != "done" {
		t.Fatalf("reply %q", out)
	}
}

func TestATypedCommandAndEventFromAHandlerContinueTheHandledConversation(t *testing.T) {
	r := startRelay(t, func(ctx *runtime.Ctx, c *runtime.Client) error {
		if err := runtime.Tell(ctx, c, runtime.Out{From: "front", Target: "back"}, "note", wire.ContentCBOR, "go"); err != nil {
			return err
		}
		return runtime.Tell(ctx, c, runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "front"}, "noted", wire.ContentCBOR, "go")
	})
	r.send(t)
	handled := recv(t, r.handled, "the front's message")
	checkContinued(t, handled, recv(t, r.got, "the command"))
	checkContinued(t, handled, recv(t, r.got, "the event"))
}

func TestWithConversationStillPicksAnotherConversationFromAHandler(t *testing.T) {
	other := wire.IDFromUint128(0, 99)
	r := startRelay(t, func(ctx *runtime.Ctx, c *runtime.Client) error {
		return runtime.Tell(ctx, c, runtime.Out{From: "front", Target: "back"}, "note", wire.ContentCBOR, "go", runtime.WithConversation(other))
	})
	r.send(t)
	recv(t, r.handled, "the front's message")
	if got := recv(t, r.got, "the command"); got.Provenance.Conversation != other {
		t.Fatalf("conversation %s, want the one asked for, %s", got.Provenance.Conversation, other)
	}
}

func TestATypedCallOutsideAHandlerStartsAConversationWithoutACause(t *testing.T) {
	r := startRelay(t, func(*runtime.Ctx, *runtime.Client) error { return nil })
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	if err := runtime.Tell(ctx, r.c, runtime.Out{From: "shop", Target: "back"}, "note", wire.ContentCBOR, "a"); err != nil {
		t.Fatal(err)
	}
	if err := runtime.Tell(ctx, r.c, runtime.Out{From: "shop", Target: "back"}, "note", wire.ContentCBOR, "b"); err != nil {
		t.Fatal(err)
	}
	a, b := recv(t, r.got, "the first command"), recv(t, r.got, "the second command")
	if a.Provenance.Conversation == b.Provenance.Conversation || a.Envelope.Cause != nil || a.Envelope.CauseAt != nil {
		t.Fatalf("two calls outside a handler: conversations %s and %s, cause %v at %v", a.Provenance.Conversation, b.Provenance.Conversation, a.Envelope.Cause, a.Envelope.CauseAt)
	}
}

func TestTellEmitsATypedEventFromTheHandlingAgent(t *testing.T) {
	type placed struct{ Order string }
	r := startRelay(t, func(ctx *runtime.Ctx, _ *runtime.Client) error {
		return runtime.Tell(ctx, ctx.Client(), runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands}, "order.placed", wire.ContentJSON, placed{Order: "o-1"})
	})
	r.send(t)
	handled, got := recv(t, r.handled, "the front's message"), recv(t, r.got, "the event")
	checkContinued(t, handled, got)
	var body placed
	if err := got.Decode(&body, wire.ContentCBOR); err != nil || body.Order != "o-1" {
		t.Fatalf("event body %+v (%v)", body, err)
	}
	if got.Kind() != wire.KindEvent || got.Operation() != "order.placed" || got.Provenance.Agent != "front" {
		t.Fatalf("event %s %q from %q, want order.placed from front", got.Kind(), got.Operation(), got.Provenance.Agent)
	}
}
