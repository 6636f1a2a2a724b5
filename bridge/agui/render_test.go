package agui_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/bridge/agui"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

var (
	conv = wire.IDFromUint128(0, 1)
	corr = wire.IDFromUint128(0, 2)
	chA  = wire.IDFromUint128(0, 3)
)

func ptr[T any](v T) *T { return &v }

func msg(e wire.Envelope) *runtime.Message {
	e.Conversation = conv
	if e.Correlation == nil {
		e.Correlation = ptr(corr)
	}
	return &runtime.Message{Envelope: &e}
}

func chunk(ch wire.ID, seq uint64, op, body string, last bool) *runtime.Message {
	e := wire.Envelope{Kind: wire.KindChunk, Channel: ptr(ch), Sequence: ptr(seq), Body: []byte(body), Last: last}
	if op != "" {
		e.Operation = ptr(op)
	}
	return msg(e)
}

func status(s wire.TaskState) *runtime.Message {
	return msg(wire.Envelope{Kind: wire.KindStatus, Operation: ptr(wire.OperationTask), TaskState: ptr(s)})
}

func errorBody(t *testing.T, text string) []byte {
	b, err := (&wire.ErrorBody{Code: wire.ErrorInternal, Message: &text}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func types(events []agui.Event) []agui.EventType {
	out := make([]agui.EventType, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

func TestRenderChatStreamAsATextMessage(t *testing.T) {
	got := agui.Render([]*runtime.Message{
		chunk(chA, 0, wire.OperationChat, "hello ", false),
		chunk(chA, 1, "", "world", false),
		chunk(chA, 2, "", "", true),
	})
	id := chA.String()
	want := []agui.Event{
		{Type: agui.TextMessageStart, MessageID: id, Role: "assistant"},
		{Type: agui.TextMessageContent, MessageID: id, Delta: "hello "},
		{Type: agui.TextMessageContent, MessageID: id, Delta: "world"},
		{Type: agui.TextMessageEnd, MessageID: id},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestRenderReasoningStreamKeepsItsPurposeAfterTheOpeningChunk(t *testing.T) {
	got := types(agui.Render([]*runtime.Message{
		chunk(chA, 0, wire.OperationReasoning, "think", false),
		chunk(chA, 1, "", "more", true),
	}))
	want := []agui.EventType{agui.ReasoningMessageStart, agui.ReasoningMessageContent, agui.ReasoningMessageContent, agui.ReasoningMessageEnd}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestRenderToolArgsStreamAsAToolCallWithItsResult(t *testing.T) {
	open := chunk(chA, 0, wire.OperationToolArgs, `{"q":`, false)
	open.Envelope.Tool = ptr("search")
	result := msg(wire.Envelope{Kind: wire.KindResponse, Tool: ptr("search"), Body: []byte("found it")})
	got := agui.Render([]*runtime.Message{open, chunk(chA, 1, "", `"laser"}`, true), result})
	id := corr.String()
	want := []agui.Event{
		{Type: agui.ToolCallStart, ToolCallID: id, ToolCallName: "search"},
		{Type: agui.ToolCallArgs, ToolCallID: id, Delta: `{"q":`},
		{Type: agui.ToolCallArgs, ToolCallID: id, Delta: `"laser"}`},
		{Type: agui.ToolCallEnd, ToolCallID: id},
		{Type: agui.ToolCallResult, ToolCallID: id, Content: "found it"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestRenderTaskStatusesAsTheRunLifecycle(t *testing.T) {
	got := agui.Render([]*runtime.Message{status(wire.TaskSubmitted), status(wire.TaskWorking), status(wire.TaskCompleted)})
	run := agui.Event{ThreadID: conv.String(), RunID: corr.String()}
	started, finished := run, run
	started.Type, finished.Type = agui.RunStarted, agui.RunFinished
	if diff := cmp.Diff([]agui.Event{started, finished}, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestRenderAFailedTaskAsARunError(t *testing.T) {
	got := types(agui.Render([]*runtime.Message{status(wire.TaskWorking), status(wire.TaskFailed)}))
	if diff := cmp.Diff([]agui.EventType{agui.RunStarted, agui.RunError}, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestRenderAnErrorAsARunErrorWithItsMessage(t *testing.T) {
	got := agui.Render([]*runtime.Message{msg(wire.Envelope{Kind: wire.KindError, Body: errorBody(t, "boom")})})
	if diff := cmp.Diff([]agui.Event{{Type: agui.RunError, Message: "boom"}}, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestRenderAStreamThatFailsEndsItsMessageThenErrs(t *testing.T) {
	fail := msg(wire.Envelope{Kind: wire.KindError, Channel: ptr(chA), Sequence: ptr(uint64(1)), Body: errorBody(t, "cut off")})
	got := types(agui.Render([]*runtime.Message{chunk(chA, 0, wire.OperationChat, "par", false), fail}))
	want := []agui.EventType{agui.TextMessageStart, agui.TextMessageContent, agui.TextMessageEnd, agui.RunError}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

// A generated stream handler that refuses its input writes the error on the
// stream's channel before any chunk: there is no message to end, and an
// AG-UI client refuses a TEXT_MESSAGE_END without its start.
func TestRenderAStreamRefusedBeforeItsFirstChunkIsARunErrorAlone(t *testing.T) {
	refused := msg(wire.Envelope{Kind: wire.KindError, Channel: ptr(chA), Sequence: ptr(uint64(0)), Body: errorBody(t, "no text")})
	got := agui.Render([]*runtime.Message{refused})
	if diff := cmp.Diff([]agui.Event{{Type: agui.RunError, Message: "no text"}}, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestRenderStateEventsAsSnapshotAndDelta(t *testing.T) {
	snap := msg(wire.Envelope{Kind: wire.KindEvent, Operation: ptr(wire.OperationStateSnapshot), Body: []byte(`{"count":1}`)})
	delta := msg(wire.Envelope{Kind: wire.KindEvent, Operation: ptr(wire.OperationStateDelta), Body: []byte(`[{"op":"replace","path":"/count","value":2}]`)})
	bad := msg(wire.Envelope{Kind: wire.KindEvent, Operation: ptr(wire.OperationStateDelta), Body: []byte(`not json`)})
	got := agui.Render([]*runtime.Message{snap, delta, bad})
	want := []agui.Event{
		{Type: agui.StateSnapshot, Snapshot: json.RawMessage(`{"count":1}`)},
		{Type: agui.StateDelta, Patch: json.RawMessage(`[{"op":"replace","path":"/count","value":2}]`)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestRenderSkipsPlainMessagesAndOtherRecords(t *testing.T) {
	got := agui.Render([]*runtime.Message{{}, msg(wire.Envelope{Kind: wire.KindCommand, Body: []byte("x")}), msg(wire.Envelope{Kind: wire.KindResponse, Body: []byte("y")})})
	if len(got) != 0 {
		t.Fatalf("events %v, want none", got)
	}
}

func TestEventJSONIsAGUIsWireForm(t *testing.T) {
	for _, c := range []struct {
		e    agui.Event
		want string
	}{
		{agui.Event{Type: agui.TextMessageContent, MessageID: "m", Delta: "hi"}, `{"delta":"hi","messageId":"m","type":"TEXT_MESSAGE_CONTENT"}`},
		{agui.Event{Type: agui.StateDelta, Patch: json.RawMessage(`[]`)}, `{"delta":[],"type":"STATE_DELTA"}`},
		{agui.Event{Type: agui.RunStarted, ThreadID: "t", RunID: "r"}, `{"runId":"r","threadId":"t","type":"RUN_STARTED"}`},
	} {
		b, err := json.Marshal(c.e)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Fatalf("%s, want %s", b, c.want)
		}
		var back agui.Event
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.e, back); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestRenderAJSONStringChunkAsItsText(t *testing.T) {
	open := chunk(chA, 0, wire.OperationChat, `"hello"`, false)
	open.ContentType, open.HasContentType = wire.ContentJSON, true
	raw := chunk(chA, 1, "", `"kept"`, true) // no content type: the bytes as they are
	got := agui.Render([]*runtime.Message{open, raw})
	if got[1].Delta != "hello" || got[2].Delta != `"kept"` {
		t.Fatalf("deltas %q and %q", got[1].Delta, got[2].Delta)
	}
}
