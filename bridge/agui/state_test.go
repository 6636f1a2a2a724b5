package agui_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/bridge/agui"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/runtime"
)

func TestStateIsTheLatestSnapshotWithLaterDeltasApplied(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		ctx, conv := t.Context(), client.IDs().NewID()
		topic := runtime.TopicAudit
		if _, ok, err := agui.State(ctx, client.Transport(), conv, topic); ok || err != nil {
			t.Fatalf("before any snapshot: ok %v err %v", ok, err)
		}
		if err := agui.PublishDelta(ctx, client, topic, "ui", conv, []agui.PatchOp{{Op: "add", Path: "/early", Value: true}}); err != nil {
			t.Fatal(err)
		}
		if err := agui.PublishSnapshot(ctx, client, topic, "ui", conv, map[string]any{"count": 1, "items": []string{"a"}}); err != nil {
			t.Fatal(err)
		}
		if err := agui.PublishDelta(ctx, client, topic, "ui", conv, []agui.PatchOp{{Op: "replace", Path: "/count", Value: 2}, {Op: "add", Path: "/items/-", Value: "b"}}); err != nil {
			t.Fatal(err)
		}
		state, ok, err := agui.State(ctx, client.Transport(), conv, topic)
		if err != nil || !ok {
			t.Fatalf("ok %v err %v", ok, err)
		}
		if diff := cmp.Diff(map[string]any{"count": 2.0, "items": []any{"a", "b"}}, state); diff != "" {
			t.Fatalf("state (-want +got):\n%s", diff)
		}
		// A later snapshot replaces everything before it.
		if err := agui.PublishSnapshot(ctx, client, topic, "ui", conv, map[string]any{"fresh": 1}); err != nil {
			t.Fatal(err)
		}
		state, _, _ = agui.State(ctx, client.Transport(), conv, topic)
		if diff := cmp.Diff(map[string]any{"fresh": 1.0}, state); diff != "" {
			t.Fatalf("after a second snapshot (-want +got):\n%s", diff)
		}
	})
}

func TestStateReportsADeltaThatDoesNotApply(t *testing.T) {
	client := bridgetest.MemClient(t)
	ctx, conv := t.Context(), client.IDs().NewID()
	if err := agui.PublishSnapshot(ctx, client, runtime.TopicAudit, "ui", conv, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if err := agui.PublishDelta(ctx, client, runtime.TopicAudit, "ui", conv, []agui.PatchOp{{Op: "remove", Path: "/missing"}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := agui.State(ctx, client.Transport(), conv, runtime.TopicAudit); !errors.Is(err, agui.ErrPatch) {
		t.Fatalf("err = %v, want ErrPatch", err)
	}
}

func TestEventsRenderAConversationFromTheLogInOrder(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		ctx, conv := t.Context(), client.IDs().NewID()
		other := client.IDs().NewID()
		for _, c := range []struct {
			conv  [16]byte
			words []string
		}{{conv, []string{"hello ", "world"}}, {other, []string{"elsewhere"}}} {
			w, err := bridge.OpenStream(client, bridge.StreamSpec{Topic: runtime.TopicLLMIO, From: "assistant", Conversation: c.conv, Correlation: c.conv})
			if err != nil {
				t.Fatal(err)
			}
			for _, word := range c.words {
				if err := w.Send(ctx, []byte(word)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(ctx, ""); err != nil {
				t.Fatal(err)
			}
		}
		events, err := agui.Events(ctx, client.Transport(), conv, runtime.TopicLLMIO)
		if err != nil {
			t.Fatal(err)
		}
		var text string
		for _, e := range events {
			text += e.Delta
		}
		want := []agui.EventType{agui.TextMessageStart, agui.TextMessageContent, agui.TextMessageContent, agui.TextMessageEnd}
		if diff := cmp.Diff(want, types(events)); diff != "" || text != "hello world" {
			t.Fatalf("text %q, events (-want +got):\n%s", text, diff)
		}
	})
}
