package runtime_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// refusedBeforeTheGate checks that err is a CodeConfig error naming option
// and verb, and that the gate was not asked.
func refusedBeforeTheGate(t *testing.T, g *kindGate, err error, option, verb string) {
	t.Helper()
	if runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("err = %v, want CodeConfig", err)
	}
	if msg := err.Error(); !strings.Contains(msg, option) || !strings.Contains(msg, verb) {
		t.Fatalf("err = %q, want it to name %s and %s", msg, option, verb)
	}
	if seen := g.seen(); len(seen) != 0 {
		t.Fatalf("the gate was asked about %v before the option was refused", seen)
	}
}

// A client's send verbs refuse an option they do not use, before the gate
// is asked: one rule where the old option families were compile errors.
func TestClientVerbsRefuseOptionsTheyDoNotUseBeforeTheGate(t *testing.T) {
	cmd := runtime.Out{From: "planner", Target: "worker", Body: []byte("x")}
	event := runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "planner", Body: []byte("x")}
	prov := wire.Provenance{Conversation: conv(), Agent: "planner"}
	cases := []struct {
		name, option, verb string
		send               func(context.Context, *runtime.Client) error
	}{
		{"task state on a command", "WithTaskState", "Send", func(ctx context.Context, c *runtime.Client) error {
			_, err := c.Send(ctx, cmd, runtime.WithTaskState(wire.TaskInputRequired))
			return err
		}},
		{"deadline on an event", "WithDeadline", "Send", func(ctx context.Context, c *runtime.Client) error {
			_, err := c.Send(ctx, event, runtime.WithDeadline(time.Now().Add(time.Minute)))
			return err
		}},
		{"answer filter on a stream", "WithAnswerFrom", "Stream", func(ctx context.Context, c *runtime.Client) error {
			for _, err := range c.Stream(ctx, cmd, runtime.WithAnswerFrom(nil)) {
				return err
			}
			return nil
		}},
		{"signing key on a plain message", "WithSigningKey", "SendPlain", func(ctx context.Context, c *runtime.Client) error {
			_, err := c.SendPlain(ctx, runtime.TopicCommands, prov, []byte("x"), runtime.WithSigningKey(newKey(7)))
			return err
		}},
		{"operation on a plain message", "WithOperation", "SendPlain", func(ctx context.Context, c *runtime.Client) error {
			_, err := c.SendPlain(ctx, runtime.TopicCommands, prov, []byte("x"), runtime.WithOperation("op"))
			return err
		}},
		{"reply topic on a contract", "WithReplyTopic", "SendContract", func(ctx context.Context, c *runtime.Client) error {
			_, err := c.SendContract(ctx, runtime.Contract{Out: cmd}, runtime.WithReplyTopic("elsewhere"))
			return err
		}},
		{"timeout on a contract", "WithTimeout", "SendContract", func(ctx context.Context, c *runtime.Client) error {
			_, err := c.SendContract(ctx, runtime.Contract{Out: cmd}, runtime.WithTimeout(time.Second))
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &kindGate{}
			c, _ := gatedClient(t, g)
			refusedBeforeTheGate(t, g, tc.send(t.Context(), c), tc.option, tc.verb)
		})
	}
}

// WithTaskState is what a task status carries: Send takes it for a status
// answering a request (a person asking for input outside a handler).
func TestSendTakesATaskStateForAStatus(t *testing.T) {
	c, _ := gatedClient(t, &kindGate{})
	corr := c.IDs().NewID()
	req := &runtime.Message{Envelope: &wire.Envelope{Kind: wire.KindCommand, Correlation: &corr}, Provenance: wire.Provenance{Conversation: conv(), Agent: "planner"}}
	status := runtime.Out{Kind: wire.KindStatus, From: "shop", Body: []byte{0xa0}, ReplyTo: req}
	env, err := c.Send(t.Context(), status, runtime.WithOperation(wire.OperationTask), runtime.WithTaskState(wire.TaskWorking))
	if err != nil {
		t.Fatal(err)
	}
	if env.TaskState == nil || *env.TaskState != wire.TaskWorking || env.Correlation == nil || *env.Correlation != corr {
		t.Fatalf("sent %+v, want a working status echoing the correlation", env)
	}
}

// A handler's answer and plain sends refuse the options they do not use:
// an answer stays in the handled conversation, has no deadline of its own
// and is governed as an answer.
func TestCtxVerbsRefuseOptionsTheyDoNotUse(t *testing.T) {
	cases := []struct {
		name, option, verb string
		send               func(*runtime.Ctx) error
	}{
		{"respond in another conversation", "WithConversation", "Respond", func(c *runtime.Ctx) error {
			return c.Respond([]byte("ok"), runtime.WithConversation(conv()))
		}},
		{"respond with a deadline", "WithDeadline", "Respond", func(c *runtime.Ctx) error {
			return c.Respond([]byte("ok"), runtime.WithDeadline(time.Now().Add(time.Minute)))
		}},
		{"respond relabelled", "WithEffectKind", "Respond", func(c *runtime.Ctx) error {
			return c.Respond([]byte("ok"), runtime.WithEffectKind(effect.Event))
		}},
		{"respond with a timeout", "WithTimeout", "Respond", func(c *runtime.Ctx) error {
			return c.Respond([]byte("ok"), runtime.WithTimeout(time.Second))
		}},
		{"plain send signed", "WithSigningKey", "Ctx.Send", func(c *runtime.Ctx) error {
			_, err := c.Send("elsewhere", "peer", []byte("x"), runtime.WithSigningKey(newKey(9)))
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var verbErr error
			sent, _ := lasertest.Run(t.Context(), lasertest.Handler{Agent: "desk"},
				func(c *runtime.Ctx, _ struct{}) error {
					verbErr = tc.send(c)
					return nil
				}, struct{}{})
			if runtime.CodeOf(verbErr) != runtime.CodeConfig {
				t.Fatalf("err = %v, want CodeConfig", verbErr)
			}
			if msg := verbErr.Error(); !strings.Contains(msg, tc.option) || !strings.Contains(msg, tc.verb) {
				t.Fatalf("err = %q, want it to name %s and %s", msg, tc.option, tc.verb)
			}
			if len(sent) != 0 {
				t.Fatalf("sent %+v, want nothing", sent)
			}
		})
	}
}

// An Out whose From is the handling agent's own id sends as that agent,
// as an empty From does: signed, in the handled conversation (what the old
// Ctx.Request filled in).
func TestSendFromTheHandlingAgentsIDSendsAsTheAgentSigned(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	if err := log.EnsureTopics(context.Background(), 1, "events"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			_, err := c.Client().Send(c, runtime.Out{Kind: wire.KindEvent, Topic: "events", From: c.Agent(), Body: []byte("booked")})
			errs <- err
			return nil
		}),
		SigningKey: newKey(52),
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
	switch env := m.Envelope; {
	case env == nil || string(env.Source) != agent:
		t.Fatalf("sent %+v, want an event from %q", env, agent)
	case env.Conversation != handled:
		t.Fatalf("conversation %s, want the handled %s", env.Conversation, handled)
	case env.Signature == nil:
		t.Fatal("unsigned, want signed with the agent's key")
	}
}

// A value that cannot be encoded will not encode on a retry either:
// EncodeBody fails with a permanent CodeCodec *Error.
func TestEncodeBodyFailsWithAPermanentCodecError(t *testing.T) {
	for _, ct := range []wire.ContentType{wire.ContentJSON, wire.ContentCBOR} {
		_, err := runtime.EncodeBody(map[string]any{"f": func() {}}, ct)
		if ct == wire.ContentJSON {
			_, err = runtime.EncodeBody(math.NaN(), ct)
		}
		var e *runtime.Error
		if !errors.As(err, &e) || e.Code != runtime.CodeCodec {
			t.Fatalf("%s: err = %v, want a CodeCodec *Error", ct, err)
		}
		if runtime.IsRetryable(err) {
			t.Fatalf("%s: %v is retryable, want permanent", ct, err)
		}
	}
}

// A plain message is answered with a plain message, which has no place for
// a signature: WithSigningKey is refused rather than sent unsigned.
func TestRespondToAPlainMessageRefusesASigningKey(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	errs := make(chan error, 1)
	start(t, log, runtime.ConsumerConfig{
		Agent:        agent,
		RespondTopic: runtime.TopicResponses,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			errs <- c.Respond([]byte("ok"), runtime.WithSigningKey(newKey(53)))
			return nil
		}),
	})
	plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, Correlation: "c1"}, "ask")
	err := recv(t, errs, "the answer")
	if runtime.CodeOf(err) != runtime.CodeConfig || !strings.Contains(err.Error(), "WithSigningKey") {
		t.Fatalf("err = %v, want CodeConfig naming WithSigningKey", err)
	}
	if recs := readAll(t, log, runtime.TopicResponses); len(recs) != 0 {
		t.Fatalf("%d answers published, want none", len(recs))
	}
}

// A send that waits for nothing ignores the wait options, so the options a
// generated client holds for all its methods (a WithTimeout for its
// requests, say) do not fail its command methods: the record sent is the
// one sent without them.
func TestASendThatWaitsForNothingIgnoresTheWaitOptions(t *testing.T) {
	g := &kindGate{}
	c, tr := gatedClient(t, g)
	plain := runtime.Out{Topic: runtime.TopicCommands, From: "planner", Target: "worker", Body: []byte("x")}
	waits := []runtime.Option{runtime.WithTimeout(time.Second), runtime.WithReplyTopic("elsewhere"),
		runtime.WithAnswerFrom(nil), runtime.WithStreamBuffer(4)}
	for _, opts := range [][]runtime.Option{nil, waits} {
		if _, err := c.Send(t.Context(), plain, append(opts, runtime.WithIdempotencyKey("k"))...); err != nil {
			t.Fatalf("Send with %d wait options: %v", len(opts), err)
		}
	}
	recs, err := tr.ReadRange(t.Context(), runtime.TopicCommands, 0, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	// The two records differ only in what each send mints (record id,
	// conversation and correlation): the same envelope otherwise, header for header.
	same := func(rec runtime.Incoming) *wire.Envelope {
		env, err := wire.DecodeEnvelope(rec.Payload)
		if err != nil {
			t.Fatal(err)
		}
		env.Record, env.Conversation, env.Correlation = nil, wire.ID{}, nil
		return env
	}
	a, b := same(recs[0]), same(recs[1])
	ea, _ := a.Marshal()
	eb, _ := b.Marshal()
	if string(ea) != string(eb) {
		t.Fatalf("the send with wait options wrote %+v, want %+v", b, a)
	}
	keys := func(h wire.EncodedHeaders) (ks []string) {
		for k := range h.All() {
			ks = append(ks, k)
		}
		return ks
	}
	if ka, kb := keys(recs[0].Headers), keys(recs[1].Headers); !slices.Equal(ka, kb) {
		t.Fatalf("header keys differ: %v against %v", ka, kb)
	}
}
