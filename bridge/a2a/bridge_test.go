package a2a_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/lasergo/laser/bridge"
	a2ab "github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/wire"
)

func newBridge(t *testing.T, client *runtime.Client, ops []operation.Info) *a2ab.Bridge {
	t.Helper()
	b, err := a2ab.New(client, a2ab.Config{Operations: ops, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func data(skill string, v map[string]any) *a2a.MessageSendParams {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: v})
	m.Metadata = map[string]any{a2ab.MetaSkill: skill}
	return &a2a.MessageSendParams{Message: m}
}

// settled waits for the task to reach a terminal state and returns it.
func settled(t *testing.T, b *a2ab.Bridge, id a2a.TaskID) *a2a.Task {
	t.Helper()
	var task *a2a.Task
	transporttest.Eventually(t, 10*time.Second, "the task to finish", func() bool {
		var err error
		task, err = b.Task(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return task.Status.State.Terminal()
	})
	return task
}

func TestSubmitTunnelsTheMessageAsACommandOnTheTaskConversation(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		b := newBridge(t, client, nil)
		p := &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "hi"})}
		task, err := b.Submit(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State != a2a.TaskStateSubmitted {
			t.Fatalf("state %s, want submitted", task.Status.State)
		}
		conv, err := wire.ParseID(string(task.ID))
		if err != nil {
			t.Fatal(err)
		}
		cmds := bridgetest.Envelopes(t, client, conv, runtime.TopicCommands)
		if len(cmds) != 1 {
			t.Fatalf("%d commands, want 1", len(cmds))
		}
		c := cmds[0]
		want, _ := json.Marshal(p)
		if c.Kind != wire.KindCommand || *c.Correlation != conv || string(c.Source) != a2ab.DefaultID || *c.Operation != wire.OperationChat || string(c.Body) != string(want) {
			t.Fatalf("command %+v body %s", c, c.Body)
		}
		if hops, _ := bridge.Hops(c.Metadata); len(hops) != 1 || hops[0] != a2ab.DefaultID {
			t.Fatalf("hops %v, want [a2a-gateway]", hops)
		}
		replayed, err := b.Task(t.Context(), task.ID)
		if err != nil || replayed.Status.State != a2a.TaskStateSubmitted {
			t.Fatalf("replayed %+v, %v", replayed, err)
		}
	})
}

func TestSubmitRefusesAMessageThatAlreadyPassedTheBridge(t *testing.T) {
	client := bridgetest.MemClient(t)
	b := newBridge(t, client, nil)
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "again"})
	m.Metadata = map[string]any{wire.MetaBridgeHops: []any{"mcp-gateway", a2ab.DefaultID}}
	if _, err := b.Submit(t.Context(), &a2a.MessageSendParams{Message: m}); !errors.Is(err, bridge.ErrLoop) {
		t.Fatalf("err = %v, want bridge.ErrLoop", err)
	}
	if n, _ := client.Transport().NextOffset(t.Context(), runtime.TopicCommands, 0); n != 0 {
		t.Fatalf("%d commands were published for a looping message", n)
	}
}

func TestTaskReplaysTheAgentsAnswerAsCompleted(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		desk.Start(t, client, &desk.Desk{})
		b := newBridge(t, client, desk.DeskOperations())
		task, err := b.Submit(t.Context(), data("quote", map[string]any{"sku": "pen", "qty": 3}))
		if err != nil {
			t.Fatal(err)
		}
		done := settled(t, b, task.ID)
		if done.Status.State != a2a.TaskStateCompleted || len(done.Artifacts) != 1 {
			t.Fatalf("task %+v", done)
		}
		part, ok := done.Artifacts[0].Parts[0].(a2a.DataPart)
		if !ok || part.Data["sku"] != "pen" || part.Data["cents"] != 750.0 {
			t.Fatalf("artifact %+v, want the typed quote", done.Artifacts[0].Parts)
		}
	})
}

func TestTaskOfARejectedInputReplaysAsFailed(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	b := newBridge(t, client, desk.DeskOperations())
	task, err := b.Submit(t.Context(), data("quote", map[string]any{"sku": "pen", "qty": 0}))
	if err != nil {
		t.Fatal(err)
	}
	done := settled(t, b, task.ID)
	if done.Status.State != a2a.TaskStateFailed || done.Status.Message == nil {
		t.Fatalf("task %+v, want failed with the agent's message", done)
	}
	if text := done.Status.Message.Parts[0].(a2a.TextPart).Text; text == "" {
		t.Fatal("the failure carries no text")
	}
}

func TestSubmitRefusesInputTheSchemaRejects(t *testing.T) {
	client := bridgetest.MemClient(t)
	b := newBridge(t, client, desk.DeskOperations())
	for name, p := range map[string]*a2a.MessageSendParams{
		"wrong type":    data("quote", map[string]any{"sku": 7, "qty": 1}),
		"missing field": data("quote", map[string]any{"sku": "pen"}),
		"unknown skill": data("haggle", map[string]any{}),
		"no skill":      {Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{}})},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := b.Submit(t.Context(), p); !errors.Is(err, a2a.ErrInvalidParams) {
				t.Fatalf("err = %v, want ErrInvalidParams", err)
			}
		})
	}
	if n, _ := client.Transport().NextOffset(t.Context(), desk.DeskListenTopic, 0); n != 0 {
		t.Fatalf("%d commands were published for refused input", n)
	}
}

func TestCancelReplaysTheTaskAsCanceled(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		b := newBridge(t, client, nil)
		task, err := b.Submit(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "cancel me"})})
		if err != nil {
			t.Fatal(err)
		}
		canceled, err := b.Cancel(t.Context(), task.ID, task.Metadata[a2ab.MetaCancelToken].(string))
		if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel: %+v, %v", canceled, err)
		}
		replayed, err := b.Task(t.Context(), task.ID)
		if err != nil || replayed.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("replayed %+v, %v", replayed, err)
		}
	})
}

func TestCancelOfAFinishedTaskIsRefused(t *testing.T) {
	client := bridgetest.MemClient(t)
	b := newBridge(t, client, nil)
	task, err := b.Submit(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "x"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Cancel(t.Context(), task.ID, task.Metadata[a2ab.MetaCancelToken].(string)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Cancel(t.Context(), task.ID, task.Metadata[a2ab.MetaCancelToken].(string)); !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("second cancel: %v, want ErrTaskNotCancelable", err)
	}
}

func TestTaskUnknownToTheLogIsNotFound(t *testing.T) {
	client := bridgetest.MemClient(t)
	b := newBridge(t, client, nil)
	for _, id := range []a2a.TaskID{a2a.TaskID(client.IDs().NewID().String()), "not-a-task"} {
		if _, err := b.Task(t.Context(), id); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("Task(%s): %v, want ErrTaskNotFound", id, err)
		}
	}
}

func TestStreamFollowsTheAgentsChunksToTheFinalStatus(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		desk.Start(t, client, &desk.Desk{})
		b := newBridge(t, client, desk.DeskOperations())
		var letters string
		var final *a2a.TaskStatusUpdateEvent
		first := true
		for ev, err := range b.Stream(t.Context(), data("spell", map[string]any{"text": "abc"})) {
			if err != nil {
				t.Fatal(err)
			}
			switch ev := ev.(type) {
			case *a2a.Task:
				if !first || ev.Status.State != a2a.TaskStateSubmitted {
					t.Fatalf("task event %+v not first or not submitted", ev)
				}
			case *a2a.TaskArtifactUpdateEvent:
				for _, p := range ev.Artifact.Parts {
					letters += p.(a2a.DataPart).Data["char"].(string)
				}
			case *a2a.TaskStatusUpdateEvent:
				final = ev
			}
			first = false
		}
		if letters != "abc" || final == nil || !final.Final || final.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("letters %q, final %+v", letters, final)
		}
	})
}

// An A2A 0.3 client (the Python SDK's) validates every artifact update
// against the schema, where parts is a list: the empty chunk that ends a
// stream must serialize as an empty list, never null.
func TestStreamsLastArtifactUpdateCarriesAnEmptyPartsList(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	b := newBridge(t, client, desk.DeskOperations())
	var last *a2a.TaskArtifactUpdateEvent
	for ev, err := range b.Stream(t.Context(), data("spell", map[string]any{"text": "ab"})) {
		if err != nil {
			t.Fatal(err)
		}
		if u, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			last = u
		}
	}
	if last == nil || !last.LastChunk {
		t.Fatalf("last artifact update %+v, want the stream's last chunk", last)
	}
	raw, err := json.Marshal(last)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"parts":[]`) {
		t.Fatalf("last chunk's update %s, want \"parts\":[]", raw)
	}
}

func TestStreamOfAFailingSkillEndsFailed(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	b := newBridge(t, client, desk.DeskOperations())
	var last a2a.Event
	for ev, err := range b.Stream(t.Context(), data("spell", map[string]any{"text": "a!"})) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev
	}
	final, ok := last.(*a2a.TaskStatusUpdateEvent)
	if !ok || !final.Final || final.Status.State != a2a.TaskStateFailed {
		t.Fatalf("last event %#v, want a final failed status", last)
	}
}

// A stream whose only chunk is the empty last one is an artifact with no
// parts: tasks/get must show "parts": [] (A2A 0.3 clients refuse null).
func TestTaskOfAnEmptyStreamHasAnEmptyPartsList(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	b := newBridge(t, client, desk.DeskOperations())
	task, err := b.Submit(t.Context(), data("spell", map[string]any{"text": ""}))
	if err != nil {
		t.Fatal(err)
	}
	done := settled(t, b, task.ID)
	if done.Status.State != a2a.TaskStateCompleted || len(done.Artifacts) != 1 {
		t.Fatalf("task %+v, want completed with the stream's artifact", done)
	}
	raw, err := json.Marshal(done.Artifacts[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"parts":[]`) {
		t.Fatalf("artifact %s, want \"parts\":[]", raw)
	}
}
