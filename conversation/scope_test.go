package conversation_test

import (
	"strings"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

const sessions = "agent.sessions"

// TestScopeAppendFetchBlock appends turns to two conversations on every log
// and reads one back bounded and as a prompt block.
func TestScopeAppendFetchBlock(t *testing.T) {
	for _, tr := range featuretest.Transports(t, "scope") {
		t.Run(tr.Name, func(t *testing.T) {
			ctx := t.Context()
			client := runtime.NewClient(tr.New(t), runtime.ClientConfig{})
			if err := client.Bootstrap(ctx, 2, sessions); err != nil {
				t.Fatal(err)
			}
			chat := conversation.For(client, client.IDs().NewID(), sessions)
			other := conversation.For(client, client.IDs().NewID(), sessions)
			for _, turn := range []string{"hello", "what is on the log?", "every turn"} {
				if _, err := chat.Append(ctx, sessions, []byte(turn)); err != nil {
					t.Fatal(err)
				}
				if _, err := other.Append(ctx, sessions, []byte("elsewhere")); err != nil {
					t.Fatal(err)
				}
			}
			h, err := chat.Fetch(ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(h) != 2 || string(h[0].Body()) != "what is on the log?" || string(h[1].Body()) != "every turn" {
				t.Fatalf("Fetch(2) = %d records, want the last two turns in order", len(h))
			}
			block, err := chat.Block(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			if want := "hello\nwhat is on the log?\nevery turn"; block != want {
				t.Errorf("Block = %q, want %q", block, want)
			}
		})
	}
}

func TestScopeRefusesBadInput(t *testing.T) {
	ctx := t.Context()
	client := runtime.NewClient(featuretest.EmbeddedLog(t), runtime.ClientConfig{})
	chat := conversation.For(client, client.IDs().NewID())
	if _, err := chat.Fetch(ctx, 0); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("Fetch(0) = %v, want an error asking for a bound", err)
	}
	if _, err := chat.Append(ctx, "", []byte("x")); err == nil {
		t.Error("Append to an empty topic accepted")
	}
	if _, err := conversation.For(client, wire.ID{}).Block(ctx, 5); err == nil || !strings.Contains(err.Error(), "zero conversation") {
		t.Errorf("a zero conversation id: %v, want an error naming it", err)
	}
}
