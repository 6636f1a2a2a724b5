package a2a_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/lasergo/laser/bridge"
	a2ab "github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// recordsOn counts the records on topic's first partition.
func recordsOn(t *testing.T, client *runtime.Client, topic string) uint64 {
	t.Helper()
	n, err := client.Transport().NextOffset(t.Context(), topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHandlerRefusesABodyOverTheLimitAndPublishesNothing(t *testing.T) {
	client := bridgetest.MemClient(t)
	if err := client.Transport().EnsureTopics(t.Context(), 1, desk.DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	b, err := a2ab.New(client, a2ab.Config{Operations: desk.DeskOperations()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(srv.Close)
	big := strings.Repeat("x", a2ab.DefaultMaxBodyBytes+1)
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user",` +
		`"metadata":{"skill":"order"},"parts":[{"kind":"data","data":{"sku":"` + big + `","qty":1}}]}}}`
	before := recordsOn(t, client, desk.DeskListenTopic)
	res, err := http.Post(srv.URL, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", res.StatusCode)
	}
	if after := recordsOn(t, client, desk.DeskListenTopic); after != before {
		t.Fatalf("%d records were published for a refused body", after-before)
	}
}

// forgedAnswer publishes an unsigned response completing task id, as
// anyone able to append to the reply topic could.
func forgedAnswer(t *testing.T, client *runtime.Client, id a2a.TaskID) {
	t.Helper()
	conv, err := wire.ParseID(string(id))
	if err != nil {
		t.Fatal(err)
	}
	corr := conv
	env := &wire.Envelope{Kind: wire.KindResponse, Conversation: conv, Correlation: &corr, Source: desk.DeskAgentID, Body: []byte(`{"sku":"ink","cents":1}`)}
	if _, err := bridge.Publish(t.Context(), client, runtime.TopicResponses, env, wire.ContentJSON); err != nil {
		t.Fatal(err)
	}
}

func TestUnderAVerifierAnUnsignedAnswerDoesNotCompleteATask(t *testing.T) {
	keys := bridgetest.NewKeys(t)
	client := bridgetest.TrustedClient(t, keys.Registry)
	if err := client.Transport().EnsureTopics(t.Context(), 1, desk.DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	b, err := a2ab.New(client, a2ab.Config{Operations: desk.DeskOperations(), Key: keys.Gateway})
	if err != nil {
		t.Fatal(err)
	}
	task, err := b.Submit(t.Context(), data("quote", map[string]any{"sku": "ink", "qty": 2}))
	if err != nil {
		t.Fatal(err)
	}
	forgedAnswer(t, client, task.ID)
	got, err := b.Task(t.Context(), task.ID)
	if err != nil {
		t.Fatalf("the bridge's own signed status was not replayed: %v", err)
	}
	if got.Status.State != a2a.TaskStateSubmitted || len(got.Artifacts) != 0 {
		t.Fatalf("task %s with %d artifacts after an unsigned answer, want still submitted", got.Status.State, len(got.Artifacts))
	}
}

func TestUnderAVerifierASignedAnswerCompletesATask(t *testing.T) {
	keys := bridgetest.NewKeys(t)
	client := bridgetest.TrustedClient(t, keys.Registry)
	desk.StartSigned(t, client, &desk.Desk{}, keys.Desk, keys.Registry)
	b, err := a2ab.New(client, a2ab.Config{Operations: desk.DeskOperations(), Key: keys.Gateway, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	task, err := b.Submit(t.Context(), data("quote", map[string]any{"sku": "ink", "qty": 2}))
	if err != nil {
		t.Fatal(err)
	}
	got := settled(t, b, task.ID)
	if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 {
		t.Fatalf("task %s with %d artifacts, want completed with the desk's answer", got.Status.State, len(got.Artifacts))
	}
}

func TestABridgeOnAVerifyingClientNeedsAKey(t *testing.T) {
	keys := bridgetest.NewKeys(t)
	if _, err := a2ab.New(bridgetest.TrustedClient(t, keys.Registry), a2ab.Config{Operations: desk.DeskOperations()}); err == nil {
		t.Fatal("a bridge that could not sign its own task records was built on a verifying client")
	}
}

func TestOnlyTheHolderOfTheCancelTokenCancelsATask(t *testing.T) {
	client := bridgetest.MemClient(t)
	if err := client.Transport().EnsureTopics(t.Context(), 1, desk.DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	c, _ := serve(t, client)
	res, err := c.SendMessage(t.Context(), data("order", map[string]any{"sku": "ink", "qty": 1}))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	token, _ := task.Metadata[a2ab.MetaCancelToken].(string)
	if token == "" {
		t.Fatalf("message/send returned no %s: %+v", a2ab.MetaCancelToken, task.Metadata)
	}
	for name, md := range map[string]map[string]any{
		"no token":    nil,
		"wrong token": {a2ab.MetaCancelToken: "guessed"},
	} {
		if _, err := c.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID, Metadata: md}); err == nil {
			t.Fatalf("%s: someone holding only the task id canceled it", name)
		}
	}
	got, err := c.GetTask(t.Context(), &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("after refused cancels: %+v, %v", got, err)
	}
	canceled, err := c.CancelTask(t.Context(), &a2a.TaskIDParams{ID: task.ID, Metadata: map[string]any{a2ab.MetaCancelToken: token}})
	if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("the owner's cancel: %+v, %v", canceled, err)
	}
}

func TestACancelWithoutTheTokenIsNotOwner(t *testing.T) {
	client := bridgetest.MemClient(t)
	b := newBridge(t, client, nil)
	task, err := b.Submit(t.Context(), &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "x"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Cancel(t.Context(), task.ID, ""); !errors.Is(err, a2ab.ErrNotOwner) || !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("err = %v, want ErrNotOwner as TaskNotCancelable", err)
	}
}

func TestAJSONRPCErrorMessageSaysWhatWasWrong(t *testing.T) {
	client := bridgetest.MemClient(t)
	b, err := a2ab.New(client, a2ab.Config{Operations: desk.DeskOperations()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(srv.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user",` +
		`"metadata":{"skill":"refund"},"parts":[{"kind":"data","data":{}}]}}}`
	res, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error.Code != -32602 || !strings.Contains(out.Error.Message, `no skill "refund"`) {
		t.Fatalf("error %+v, want invalid params saying there is no skill refund", out.Error)
	}
}
