package agui_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/bridge/agui"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// sse reads server-sent events off resp, one decoded event per data line.
func sse(t *testing.T, resp *http.Response) <-chan agui.Event {
	t.Helper()
	out := make(chan agui.Event, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var e agui.Event
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Errorf("event %q: %v", data, err)
				return
			}
			out <- e
		}
	}()
	return out
}

func get(t *testing.T, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %s, content type %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	return resp
}

func chat(t *testing.T, client *runtime.Client, conv wire.ID, words ...string) {
	t.Helper()
	answer(t, client, conv, conv, words...)
}

// answer writes words as a chat stream answering the command correlated
// corr.
func answer(t *testing.T, client *runtime.Client, conv, corr wire.ID, words ...string) {
	t.Helper()
	w, err := bridge.OpenStream(client, bridge.StreamSpec{Topic: runtime.TopicLLMIO, From: "assistant", Conversation: conv, Correlation: corr})
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range words {
		if err := w.Send(t.Context(), []byte(word)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
}

func publishStatus(t *testing.T, client *runtime.Client, conv wire.ID, s wire.TaskState) {
	t.Helper()
	op, corr := wire.OperationTask, conv
	env := &wire.Envelope{Kind: wire.KindStatus, Conversation: conv, Source: "assistant", Correlation: &corr, Operation: &op, TaskState: &s}
	if _, err := bridge.Publish(t.Context(), client, runtime.TopicLLMIO, env, wire.ContentRaw); err != nil {
		t.Fatal(err)
	}
}

func next(t *testing.T, events <-chan agui.Event) agui.Event {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the stream ended early")
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return agui.Event{}
}

func TestSSEServesAConversationsEventsInOrderAndEnds(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		conv := client.IDs().NewID()
		chat(t, client, conv, "hello ", "world")
		srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO})
		t.Cleanup(srv.Close)
		var got []agui.EventType
		for e := range sse(t, get(t, srv.URL+"/?threadId="+conv.String())) {
			got = append(got, e.Type)
		}
		want := []agui.EventType{agui.TextMessageStart, agui.TextMessageContent, agui.TextMessageContent, agui.TextMessageEnd}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
	})
}

func TestSSEFollowsARunUntilItFinishes(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		conv := client.IDs().NewID()
		publishStatus(t, client, conv, wire.TaskSubmitted)
		srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO, Follow: true, PollInterval: time.Millisecond})
		t.Cleanup(srv.Close)
		events := sse(t, get(t, srv.URL+"/?threadId="+conv.String()))
		if e := next(t, events); e.Type != agui.RunStarted || e.ThreadID != conv.String() {
			t.Fatalf("first event %+v, want the run started", e)
		}
		// Written after the client connected: it sees them live.
		chat(t, client, conv, "live")
		publishStatus(t, client, conv, wire.TaskCompleted)
		var got []agui.EventType
		for e := range events {
			got = append(got, e.Type)
		}
		want := []agui.EventType{agui.TextMessageStart, agui.TextMessageContent, agui.TextMessageEnd, agui.RunFinished}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("events after the start (-want +got):\n%s", diff)
		}
	})
}

func TestSSEReadsTheThreadOfAPostedRunAgentInput(t *testing.T) {
	client := bridgetest.MemClient(t)
	conv := client.IDs().NewID()
	chat(t, client, conv, "hi")
	srv := httptest.NewServer(&agui.Handler{Client: client, Topic: runtime.TopicLLMIO})
	t.Cleanup(srv.Close)
	body := `{"threadId":"` + conv.String() + `","runId":"r1","messages":[]}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	for range sse(t, resp) {
		n++
	}
	if n != 3 {
		t.Fatalf("%d events, want start, content, end", n)
	}
}

func TestSSERefusesARequestWithoutAConversation(t *testing.T) {
	srv := httptest.NewServer(&agui.Handler{Client: bridgetest.MemClient(t), Topic: runtime.TopicLLMIO})
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/?threadId=nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %s, want 400", resp.Status)
	}
}
