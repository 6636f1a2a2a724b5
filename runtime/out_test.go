package runtime_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// An Out with no From sent under a handler's Ctx goes out as the handling
// agent, in the handled conversation, signed with its key: what Ctx.Emit
// did before the send verbs folded into Client.Send.
func TestSendWithoutFromUnderAHandlerSendsAsTheAgentSigned(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	if err := log.EnsureTopics(context.Background(), 1, "events"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			_, err := c.Client().Send(c, runtime.Out{Kind: wire.KindEvent, Topic: "events", Body: []byte("booked")})
			errs <- err
			return nil
		}),
		SigningKey: newKey(51),
	})
	handled := conv()
	plain(t, log, wire.Provenance{Conversation: handled, Agent: sender}, "book")
	if err := recv(t, errs, "the send"); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, log, "events")
	if len(recs) != 1 {
		t.Fatalf("%d records on events, want 1", len(recs))
	}
	m, err := runtime.DecodeRecord("events", &recs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	env := m.Envelope
	switch {
	case env == nil || env.Kind != wire.KindEvent:
		t.Fatalf("sent %+v, want an event", env)
	case string(env.Source) != agent:
		t.Fatalf("source %q, want the handling agent %q", env.Source, agent)
	case env.Conversation != handled:
		t.Fatalf("conversation %s, want the handled %s", env.Conversation, handled)
	case env.Signature == nil:
		t.Fatal("unsigned, want signed with the agent's key")
	}
}

// Outside a handler there is no agent to send as: an Out with no From is a
// configuration error, as a sender that is not an agent id always was.
func TestSendWithoutFromOutsideAHandlerIsAConfigError(t *testing.T) {
	c := newClient(t, newLog(t, 1, clock.System{}), clock.System{}, nil)
	_, err := c.Send(context.Background(), runtime.Out{Kind: wire.KindEvent, Topic: "events", Body: []byte("x")})
	if runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("err = %v, want CodeConfig", err)
	}
}

// A request is a command: Request and Stream refuse an Out of another kind
// before anything is published.
func TestRequestRefusesAnOutThatIsNotACommand(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	c := newClient(t, log, clock.System{}, nil)
	event := runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "caller", Body: []byte("x")}
	if _, err := c.Request(context.Background(), event); runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("Request: err = %v, want CodeConfig", err)
	}
	for _, err := range c.Stream(context.Background(), event) {
		if runtime.CodeOf(err) != runtime.CodeConfig {
			t.Fatalf("Stream: err = %v, want CodeConfig", err)
		}
	}
	if recs := readAll(t, log, runtime.TopicCommands); len(recs) != 0 {
		t.Fatalf("%d records published", len(recs))
	}
}

// Chunks belong to a handler's stream: Send refuses them, and a message
// answering a request must be a response or an error.
func TestSendRefusesKindsItCannotBuild(t *testing.T) {
	c := newClient(t, newLog(t, 1, clock.System{}), clock.System{}, nil)
	if _, err := c.Send(context.Background(), runtime.Out{Kind: wire.KindChunk, Topic: "t", From: "a"}); runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("chunk: err = %v, want CodeConfig", err)
	}
	req := &runtime.Message{Envelope: &wire.Envelope{Kind: wire.KindCommand, Correlation: new(wire.ID)}}
	if _, err := c.Send(context.Background(), runtime.Out{Kind: wire.KindEvent, Topic: "t", From: "a", ReplyTo: req}); runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("event answering a request: err = %v, want CodeConfig", err)
	}
}

// A status goes to agent.registry unless the Out names a topic, with its
// body in CBOR: what PublishStatus did.
func TestSendAStatusDefaultsToTheRegistryInCBOR(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	if err := log.EnsureTopics(context.Background(), 1, runtime.TopicRegistry); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, log, clock.System{}, nil)
	if _, err := c.Send(context.Background(), runtime.Out{Kind: wire.KindStatus, From: "shop", Body: []byte{0xa0}}, runtime.WithOperation(wire.OperationProgress)); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, log, runtime.TopicRegistry)
	if len(recs) != 1 {
		t.Fatalf("%d records on %s, want 1", len(recs), runtime.TopicRegistry)
	}
	m, err := runtime.DecodeRecord(runtime.TopicRegistry, &recs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind() != wire.KindStatus || m.Operation() != wire.OperationProgress || !m.HasContentType || m.ContentType != wire.ContentCBOR {
		t.Fatalf("a %s %q in %v, want a CBOR progress status", m.Kind(), m.Operation(), m.ContentType)
	}
}

// WithTaskState turns a handler's answer into a task status on its respond
// topic, the request's correlation echoed (what Ctx.Status did).
func TestRespondWithTaskStateSendsAStatus(t *testing.T) {
	sent, err := lasertest.Run(context.Background(), lasertest.Handler{Agent: "desk"},
		func(c *runtime.Ctx, _ struct{}) error {
			return c.Respond(nil, runtime.WithTaskState(wire.TaskInputRequired))
		}, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || sent[0].Message.Envelope == nil {
		t.Fatalf("sent %+v, want one status", sent)
	}
	env := sent[0].Message.Envelope
	if env.Kind != wire.KindStatus || env.TaskState == nil || *env.TaskState != wire.TaskInputRequired || env.Correlation == nil {
		t.Fatalf("sent %+v, want an input-required status echoing the correlation", env)
	}
}
