package main

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// tailEvent is one server-sent event of the live tail.
type tailEvent struct{ id, data string }

// openTail opens /tail/events for topic with query and header and returns a
// function reading the next event.
func openTail(t *testing.T, srvURL, query, lastEventID string) func() tailEvent {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srvURL+"/tail/events?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /tail/events?%s: status %d", query, resp.StatusCode)
	}
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	return func() tailEvent {
		t.Helper()
		var ev tailEvent
		for lines.Scan() {
			line := lines.Text()
			switch {
			case line == "" && ev.data != "":
				return ev
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
		t.Fatalf("the tail ended: %v", lines.Err())
		return ev
	}
}

func TestConsoleTailResumesFromLastEventID(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	topic := runtime.TopicCommands
	// Every record from the start: the id after the last seeded one is
	// where a reconnecting browser resumes.
	next := openTail(t, srv.URL, "from=start&topic="+topic, "")
	var last tailEvent
	for range 4 { // the seeded commands (see TestConsoleShowsTopicsAndTheirRecords)
		last = next()
	}
	if last.id == "" {
		t.Fatal("a tail event carries no id")
	}
	if _, err := s.client.SendPlain(t.Context(), topic, wire.Provenance{Conversation: s.client.IDs().NewID(), Agent: "shop"}, []byte("after the drop")); err != nil {
		t.Fatal(err)
	}
	// The reconnect asks from=start again, as the page's URL does: the id
	// wins, so nothing is replayed and nothing is skipped.
	resumed := openTail(t, srv.URL, "from=start&topic="+topic, last.id)()
	if !strings.Contains(resumed.data, "after the drop") {
		t.Fatalf("the resumed tail's first event is not the record sent after the drop:\n%s", resumed.data)
	}
	if resumed.id == last.id {
		t.Fatalf("the resumed event's id %q did not advance", resumed.id)
	}
}

func TestConsoleTailRefusesAMalformedLastEventID(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	for _, id := range []string{"x", "1,2,3", "-1,0"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/tail/events?topic="+runtime.TopicCommands, nil)
		req.Header.Set("Last-Event-ID", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("Last-Event-ID %q: status %d, want 400", id, resp.StatusCode)
		}
	}
}

func TestConsoleTailPageFollowsNewRecordsAndOffersTheStart(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	wantPage(t, srv, "/tail?topic=agent.commands", http.StatusOK, `data-from="now"`, `id="from-start"`)
	wantPage(t, srv, "/tail?topic=agent.commands&from=start", http.StatusOK, `data-from="start"`, `id="from-now"`)
}
