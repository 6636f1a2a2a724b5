package memory_test

import (
	"slices"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

type question struct{ text string }

func (q question) String() string { return q.text }

// handling returns the context of a handler handling a plain message of
// conv with body.
func handling(t *testing.T, client *runtime.Client, conv wire.ID, body string) *runtime.Ctx {
	t.Helper()
	ctx := t.Context()
	pos, err := client.SendPlain(ctx, runtime.TopicCommands, wire.Provenance{Conversation: conv, Agent: "user"}, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := client.Transport().ReadRange(ctx, runtime.TopicCommands, pos.Partition, pos.Offset, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("read back: %v", err)
	}
	m, err := runtime.DecodeRecord(runtime.TopicCommands, &recs[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	return lasertest.NewCtx(ctx, client, m, "bot", "")
}

func TestRecallForRecallsFromTheMessagesConversationByItsInput(t *testing.T) {
	client := newClient(t)
	mem := memory.New(client, memory.Config{})
	ada, bob := conversation.Derive("ada"), conversation.Derive("bob")
	remember(t, mem, memory.Scope{Conversation: ada}, "ada's invoice INV-77 was disputed")
	remember(t, mem, memory.Scope{Conversation: ada}, "ada prefers email")
	remember(t, mem, memory.Scope{Conversation: bob}, "bob's invoice INV-77 copy")
	remember(t, mem, memory.Scope{Conversation: bob, Lifetime: memory.Durable}, "every INV- number is an invoice")
	c := handling(t, client, ada, "what about the body")
	got, err := memory.RecallFor(c, mem, question{"INV-77"}, memory.Query{Strategy: memory.Keyword, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if b := bodies(got); !slices.Equal(b, []string{"ada's invoice INV-77 was disputed", "every INV- number is an invoice"}) {
		t.Fatalf("recalled %q: want ada's match, then the durable one", b)
	}
	// An input that is no text recalls by the message body.
	got, err = memory.RecallFor(c, mem, struct{}{}, memory.Query{Strategy: memory.Keyword})
	if err != nil || len(got) != 0 {
		t.Fatalf("recalled %q (%v) for the body %q", bodies(got), err, "what about the body")
	}
	if block := got.Block(100); block != "" {
		t.Fatalf("an empty recall renders %q", block)
	}
}

func TestRecallForWithoutALogIsAHandlerConfigError(t *testing.T) {
	client := newClient(t)
	c := handling(t, client, conversation.Derive("ada"), "x")
	if _, err := memory.RecallFor(c, nil, "x", memory.Query{}); runtime.CodeOf(err) != runtime.CodeHandlerConfig {
		t.Fatalf("err = %v, want a handler config error", err)
	}
}
