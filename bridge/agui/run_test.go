package agui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/bridge/agui"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// post sends an AG-UI RunAgentInput for thread and run.
func post(t *testing.T, url string, thread wire.ID, run string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"threadId": thread.String(), "runId": run,
		"messages": []map[string]any{{"id": "u1", "role": "user", "content": []map[string]any{{"type": "text", "text": "hi"}}}}})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// drain reads events to the stream's end and returns their types.
func drain(events <-chan agui.Event) []agui.EventType {
	var got []agui.EventType
	for e := range events {
		got = append(got, e.Type)
	}
	return got
}

// startedOn is a Handler.Run that only reports the run on started: the
// test then writes what the agent would.
func startedOn(started chan<- agui.RunInput) func(context.Context, agui.RunInput) (*wire.Envelope, error) {
	return func(_ context.Context, in agui.RunInput) (*wire.Envelope, error) {
		started <- in
		return nil, nil
	}
}

func TestARunStartsWithTheClientsRunAndShowsOnlyWhatTheRunWrites(t *testing.T) {
	client := bridgetest.MemClient(t)
	conv := client.IDs().NewID()
	// An earlier run of the thread, finished: the client holds its
	// messages, and its RUN_FINISHED must not end the new run.
	publishStatus(t, client, conv, wire.TaskSubmitted)
	chat(t, client, conv, "earlier answer")
	publishStatus(t, client, conv, wire.TaskCompleted)
	started := make(chan agui.RunInput, 1)
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO, Run: startedOn(started), PollInterval: time.Millisecond})
	t.Cleanup(srv.Close)
	events := sse(t, post(t, srv.URL, conv, "run-7"))
	got := <-started
	publishStatus(t, client, conv, wire.TaskWorking)
	chat(t, client, conv, "new ", "answer")
	publishStatus(t, client, conv, wire.TaskCompleted)
	first := next(t, events)
	if first.Type != agui.RunStarted || first.ThreadID != conv.String() || first.RunID != "run-7" {
		t.Fatalf("first event %+v, want the client's run started", first)
	}
	want := []agui.EventType{agui.TextMessageStart, agui.TextMessageContent, agui.TextMessageContent, agui.TextMessageEnd, agui.RunFinished}
	if diff := cmp.Diff(want, drain(events)); diff != "" {
		t.Fatalf("events after the start (-want +got):\n%s", diff)
	}
	if got.Thread != conv || got.RunID != "run-7" || got.LastUserText() != "hi" {
		t.Fatalf("Run got %+v, want the thread, the run and the user's text", got)
	}
}

func TestARunAnsweredByAStreamAloneFinishesAtItsEnd(t *testing.T) {
	client := bridgetest.MemClient(t)
	conv := client.IDs().NewID()
	started := make(chan agui.RunInput, 1)
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO, Run: startedOn(started), PollInterval: time.Millisecond})
	t.Cleanup(srv.Close)
	events := sse(t, post(t, srv.URL, conv, "r"))
	<-started
	chat(t, client, conv, "only ", "words")
	want := []agui.EventType{agui.RunStarted, agui.TextMessageStart, agui.TextMessageContent, agui.TextMessageContent, agui.TextMessageEnd, agui.RunFinished}
	if diff := cmp.Diff(want, drain(events)); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestARunThatCannotStartIsABadGateway(t *testing.T) {
	client := bridgetest.MemClient(t)
	run := func(context.Context, agui.RunInput) (*wire.Envelope, error) {
		return nil, errors.New("the agent's topic is gone")
	}
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO, Run: run})
	t.Cleanup(srv.Close)
	body, _ := json.Marshal(map[string]any{"threadId": client.IDs().NewID().String(), "runId": "r"})
	resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("status %s, want 502", resp.Status)
	}
}

func TestARunShowsAndEndsOnlyOnItsOwnCommandsAnswer(t *testing.T) {
	client := bridgetest.MemClient(t)
	conv := client.IDs().NewID()
	mine, other := client.IDs().NewID(), client.IDs().NewID()
	started := make(chan struct{}, 1)
	run := func(context.Context, agui.RunInput) (*wire.Envelope, error) {
		started <- struct{}{}
		return &wire.Envelope{Kind: wire.KindCommand, Conversation: conv, Correlation: &mine}, nil
	}
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO, Run: run, PollInterval: time.Millisecond})
	t.Cleanup(srv.Close)
	events := sse(t, post(t, srv.URL, conv, "run-b"))
	<-started
	// Another run on the same thread is answered first.
	answer(t, client, conv, other, "the other run's answer")
	answer(t, client, conv, mine, "my answer")
	var got []string
	for e := range events {
		got = append(got, string(e.Type)+" "+e.Delta)
	}
	want := []string{"RUN_STARTED ", "TEXT_MESSAGE_START ", "TEXT_MESSAGE_CONTENT my answer", "TEXT_MESSAGE_END ", "RUN_FINISHED "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

// failingLog fails every tail lookup once failing is set.
type failingLog struct {
	runtime.Transport
	failing atomic.Bool
}

func (f *failingLog) NextOffset(ctx context.Context, topic string, p uint32) (uint64, error) {
	if f.failing.Load() {
		return 0, errors.New("the log is gone")
	}
	return f.Transport.NextOffset(ctx, topic, p)
}

func TestARunWhoseLogFailsEndsWithARunError(t *testing.T) {
	log := &failingLog{Transport: embedlog.New("bridges", embedlog.Config{})}
	client := bridgetest.Client(t, log)
	run := func(context.Context, agui.RunInput) (*wire.Envelope, error) {
		log.failing.Store(true) // after the handler found where to follow from
		return nil, nil
	}
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO, Run: run, PollInterval: time.Millisecond})
	t.Cleanup(srv.Close)
	want := []agui.EventType{agui.RunStarted, agui.RunError}
	if diff := cmp.Diff(want, drain(sse(t, post(t, srv.URL, client.IDs().NewID(), "r")))); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}
