package a2a_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	a2ab "github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
)

// serve runs the bridge over HTTP on loopback and returns an a2a-go client
// built from the card it serves.
func serve(t *testing.T, client *runtime.Client) (*a2aclient.Client, *a2a.AgentCard) {
	t.Helper()
	// The card names the URL, so the listener comes first; the handler is
	// set before the server starts serving.
	srv := httptest.NewUnstartedServer(nil)
	url := "http://" + srv.Listener.Addr().String()
	b, err := a2ab.New(client, a2ab.Config{Operations: desk.DeskOperations(), Card: desk.DeskCard(), URL: url, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = b.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c, card
}

func TestCardServesOneSkillPerOperation(t *testing.T) {
	_, card := serve(t, bridgetest.MemClient(t))
	if card.Name != desk.DeskAgentID || !card.Capabilities.Streaming || len(card.Skills) != 3 {
		t.Fatalf("card %+v", card)
	}
	quote := card.Skills[0]
	if quote.ID != desk.DeskOpQuote || quote.Description != "Quote prices an item at 250 cents each." {
		t.Fatalf("first skill %+v, want quote with its doc comment", quote)
	}
}

func TestA2AClientSendsAMessageAndReadsTheTask(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		desk.Start(t, client, &desk.Desk{})
		c, _ := serve(t, client)
		res, err := c.SendMessage(t.Context(), data("quote", map[string]any{"sku": "ink", "qty": 2}))
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateSubmitted {
			t.Fatalf("result %#v, want a submitted task", res)
		}
		transporttest.Eventually(t, 10*time.Second, "the task to complete", func() bool {
			task, err = c.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			return task.Status.State == a2a.TaskStateCompleted
		})
		part, ok := task.Artifacts[0].Parts[0].(a2a.DataPart)
		if !ok || part.Data["cents"] != 500.0 {
			t.Fatalf("artifact %+v", task.Artifacts)
		}
	})
}

func TestA2AClientCancelsATask(t *testing.T) {
	client := bridgetest.MemClient(t)
	// No desk runs, so the order is never taken and the task stays open.
	if err := client.Transport().EnsureTopics(t.Context(), 1, desk.DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	c, _ := serve(t, client)
	res, err := c.SendMessage(t.Context(), data("order", map[string]any{"sku": "ink", "qty": 1}))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	owner := map[string]any{a2ab.MetaCancelToken: res.(*a2a.Task).Metadata[a2ab.MetaCancelToken]}
	canceled, err := c.CancelTask(t.Context(), &a2a.TaskIDParams{ID: id, Metadata: owner})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("cancel %+v, %v", canceled, err)
	}
	task, err := c.GetTask(t.Context(), &a2a.TaskQueryParams{ID: id})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("get %+v, %v", task, err)
	}
	if _, err := c.CancelTask(t.Context(), &a2a.TaskIDParams{ID: id, Metadata: owner}); err == nil {
		t.Fatal("a canceled task was canceled again")
	}
}

func TestA2AClientStreamsAMessage(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	c, _ := serve(t, client)
	var letters string
	var final bool
	for ev, err := range c.SendStreamingMessage(t.Context(), data("spell", map[string]any{"text": "log"})) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range ev.Artifact.Parts {
				letters += p.(a2a.DataPart).Data["char"].(string)
			}
		case *a2a.TaskStatusUpdateEvent:
			final = ev.Final && ev.Status.State == a2a.TaskStateCompleted
		}
	}
	if letters != "log" || !final {
		t.Fatalf("letters %q, final completed %v", letters, final)
	}
}

func TestA2AClientGetsAnErrorForAnUnknownTask(t *testing.T) {
	client := bridgetest.MemClient(t)
	c, _ := serve(t, client)
	if _, err := c.GetTask(t.Context(), &a2a.TaskQueryParams{ID: a2a.TaskID(client.IDs().NewID().String())}); err == nil {
		t.Fatal("an unknown task was found")
	}
}

func TestA2AClientsBlockingSendReturnsTheFinishedTask(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	c, _ := serve(t, client)
	p := data("quote", map[string]any{"sku": "ink", "qty": 2})
	blocking := true
	p.Config = &a2a.MessageSendConfig{Blocking: &blocking}
	res, err := c.SendMessage(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("result %#v, want the completed task with its answer", res)
	}
	if task.Metadata[a2ab.MetaCancelToken] == nil {
		t.Fatal("a blocking send lost the cancel token")
	}
}

func TestA2AClientStreamsARequestsAnswerAsAnArtifactThenTheFinalStatus(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	c, _ := serve(t, client)
	var kinds []string
	var cents any
	for ev, err := range c.SendStreamingMessage(t.Context(), data("quote", map[string]any{"sku": "ink", "qty": 2})) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *a2a.Task:
			kinds = append(kinds, "task")
		case *a2a.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
			cents = ev.Artifact.Parts[0].(a2a.DataPart).Data["cents"]
		case *a2a.TaskStatusUpdateEvent:
			kinds = append(kinds, string(ev.Status.State))
			if !ev.Final {
				t.Fatalf("status %s is not final", ev.Status.State)
			}
		}
	}
	if got := strings.Join(kinds, " "); got != "task artifact completed" || cents != 500.0 {
		t.Fatalf("events %q cents %v, want the task, the answer as an artifact, then completed", got, cents)
	}
}
