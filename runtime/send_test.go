package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Every option an event takes is honoured: an event a handler sends as its
// agent (no From) and one a client sends with an explicit From carry the
// same fields for the same options, because both are built on the one
// internal path.
func TestEmitHonoursEveryOptionFromCtxAndClient(t *testing.T) {
	conv := wire.IDFromUint128(0xe1, 1)
	opts := []runtime.Option{
		runtime.WithIdempotencyKey("evt-1"), runtime.WithConversation(conv),
		runtime.WithFence(3), runtime.WithMetadata("region", wire.StrValue("eu")), runtime.WithOperation("ledger.booked"),
		runtime.WithContentType(wire.ContentJSON),
	}
	for name, emit := range map[string]func(c *runtime.Ctx) error{
		"ctx": func(c *runtime.Ctx) error {
			_, err := c.Client().Send(c, runtime.Out{Kind: wire.KindEvent, Topic: "events", Body: []byte(`{}`)}, opts...)
			return err
		},
		"client": func(c *runtime.Ctx) error {
			_, err := c.Client().Send(c, runtime.Out{Kind: wire.KindEvent, Topic: "events", From: c.Agent(), Body: []byte(`{}`)}, opts...)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			sent, err := lasertest.Run(context.Background(), lasertest.Handler{Agent: "ledger"},
				func(c *runtime.Ctx, _ struct{}) error { return emit(c) }, struct{}{})
			if err != nil {
				t.Fatal(err)
			}
			if len(sent) != 1 || sent[0].Topic != "events" || sent[0].Message.Envelope == nil {
				t.Fatalf("sent %+v, want one event on events", sent)
			}
			m := sent[0].Message
			env := m.Envelope
			switch {
			case env.Kind != wire.KindEvent || env.Source != "ledger":
				t.Fatalf("a %s from %s", env.Kind, env.Source)
			case env.IdempotencyKey == nil || string(*env.IdempotencyKey) != "evt-1":
				t.Fatalf("idempotency key %v", env.IdempotencyKey)
			case env.Conversation != conv:
				t.Fatalf("conversation %s, want %s", env.Conversation, conv)
			case env.Operation == nil || *env.Operation != "ledger.booked":
				t.Fatalf("operation %v", env.Operation)
			case env.Metadata.Get(wire.HeaderFence).String() != "3" || !env.Metadata.Get("region").Equal(wire.StrValue("eu")):
				t.Fatalf("metadata %v", env.Metadata)
			case !m.HasContentType || m.ContentType != wire.ContentJSON:
				t.Fatalf("content type %v", m.ContentType)
			}
		})
	}
}

// A plain message has no place for an operation or metadata: Ctx.Send
// refuses them as a configuration error, and honours the options it can carry.
func TestCtxSendRefusesOptionsAPlainMessageCannotCarry(t *testing.T) {
	for name, opt := range map[string]runtime.Option{
		"operation": runtime.WithOperation("ship"),
		"metadata":  runtime.WithMetadata("region", wire.StrValue("eu")),
	} {
		t.Run(name, func(t *testing.T) {
			sent, err := lasertest.Run(context.Background(), lasertest.Handler{Agent: "desk"},
				func(c *runtime.Ctx, _ struct{}) error {
					_, err := c.Send("shipping.inbox", "shipper", []byte("box"), opt)
					return err
				}, struct{}{})
			if runtime.CodeOf(err) != runtime.CodeConfig {
				t.Fatalf("Send with %s: %v, want CodeConfig", name, err)
			}
			if len(sent) != 0 {
				t.Fatalf("sent %d records after refusing", len(sent))
			}
		})
	}
	conv := wire.IDFromUint128(0x5e, 2)
	sent, err := lasertest.Run(context.Background(), lasertest.Handler{Agent: "desk"},
		func(c *runtime.Ctx, _ struct{}) error {
			_, err := c.Send("shipping.inbox", "shipper", []byte("box"), runtime.WithIdempotencyKey("box-1"), runtime.WithConversation(conv), runtime.WithFence(2))
			return err
		}, struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 {
		t.Fatalf("sent %d records", len(sent))
	}
	prov := sent[0].Message.Provenance
	if prov.IdempotencyKey != "box-1" || prov.Conversation != conv || prov.Fence == nil || *prov.Fence != 2 || prov.Target != "shipper" {
		t.Fatalf("provenance %+v", prov)
	}
}

// A contract stamps its own deadline from its Expiry: a WithDeadline beside
// it is a configuration error, not silently replaced.
func TestContractRefusesADeadlineBesideItsExpiry(t *testing.T) {
	c := runtime.NewClient(newLog(t, 1, clock.System{}), runtime.ClientConfig{Logger: quietLogger()})
	_, err := c.SendContract(context.Background(), runtime.Contract{
		Out: runtime.Out{From: sender, Target: agent, Body: []byte("x")}, Expiry: time.Second,
	}, runtime.WithDeadline(time.Now().Add(time.Minute)))
	if runtime.CodeOf(err) != runtime.CodeConfig {
		t.Fatalf("SendContract = %v, want CodeConfig", err)
	}
}

// A plain message a handler sends into another conversation records that
// conversation's lineage (parent: the handled conversation; root: the
// handled root, or the handled conversation at the top), as
// SpawnSubconversation does, so history assembled by parent or root finds it.
func TestCtxSendIntoAnotherConversationRecordsItsLineage(t *testing.T) {
	var handled wire.ID
	sent, err := lasertest.Run(context.Background(), lasertest.Handler{Agent: "desk"},
		func(c *runtime.Ctx, _ struct{}) error {
			handled = c.Message().Provenance.Conversation
			sub := c.SpawnSubconversation()
			_, err := c.Send("ledger.commands", "ledger", []byte("entry"), runtime.WithConversation(sub.Conversation))
			return err
		}, struct{}{})
	if err != nil || len(sent) != 1 {
		t.Fatalf("sent %d records, %v", len(sent), err)
	}
	prov := sent[0].Message.Provenance
	if prov.ParentConversation == nil || *prov.ParentConversation != handled ||
		prov.RootConversation == nil || *prov.RootConversation != handled || prov.Conversation == handled {
		t.Fatalf("provenance %+v: want a new conversation whose parent and root are the handled %s", prov, handled)
	}
}
