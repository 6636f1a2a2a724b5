package a2a_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	a2ab "github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
)

// serveDesk runs the desk and the A2A bridge over HTTP on loopback and
// returns the bridge's URL.
func serveDesk(t *testing.T) string {
	t.Helper()
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	// The card names the URL, so the listener comes first.
	srv := httptest.NewUnstartedServer(nil)
	url := "http://" + srv.Listener.Addr().String()
	b, err := a2ab.New(client, a2ab.Config{Operations: desk.DeskOperations(), Card: desk.DeskCard(), URL: url, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = b.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return url
}

func TestPythonA2AClientDrivesTheBridge(t *testing.T) {
	py := bridgetest.Python(t, "a2a.client")
	raw := bridgetest.RunClient(t, nil, py, "testdata/python_a2a.py", serveDesk(t))
	var out map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	text := func(k string) string {
		var s string
		_ = json.Unmarshal(out[k], &s)
		return s
	}
	if s := string(out["blocking"]); !strings.Contains(s, "TASK_STATE_COMPLETED") || !strings.Contains(s, `"cents": 500`) {
		t.Errorf("blocking send: %s, want the completed task with its answer", s)
	}
	if s := string(out["stream"]); !strings.Contains(s, "artifactUpdate") || !strings.Contains(s, "TASK_STATE_COMPLETED") || !strings.Contains(s, `"cents": 500`) {
		t.Errorf("streamed send: %s, want the answer as an artifact and the final status", s)
	}
	if s := string(out["failed"]); !strings.Contains(s, "TASK_STATE_FAILED") || !strings.Contains(s, "qty must be positive") {
		t.Errorf("an agent's failure: %s, want a failed task with its message", s)
	}
	if s := text("unknown_skill"); !strings.Contains(s, `no skill \"refund\"`) && !strings.Contains(s, `no skill "refund"`) {
		t.Errorf("unknown skill: %q, want the error to say there is no such skill", s)
	}
	if s := text("oversized"); s == "" {
		t.Errorf("an oversized message was accepted")
	}
	if s := text("cancel_without_token"); s == "" {
		t.Errorf("a cancel without the task's token was accepted")
	}
	if s := string(out["canceled"]) + string(out["got"]); strings.Count(s, "TASK_STATE_CANCELED") != 2 {
		t.Errorf("the owner's cancel: %s", s)
	}
}

func TestPythonA2AClientSpeakingA2A10DrivesTheBridge(t *testing.T) {
	py := bridgetest.Python(t, "a2a.client")
	raw := bridgetest.RunClient(t, nil, py, "testdata/python_a2a_v1.py", serveDesk(t))
	var out map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if s := string(out["blocking"]); !strings.Contains(s, "TASK_STATE_COMPLETED") || !strings.Contains(s, `"cents": 500`) {
		t.Errorf("blocking send: %s, want the completed task with its answer", s)
	}
	if s := string(out["stream"]); !strings.Contains(s, "artifactUpdate") || !strings.Contains(s, "TASK_STATE_COMPLETED") || !strings.Contains(s, `"cents": 500`) {
		t.Errorf("streamed send: %s, want the answer as an artifact and the final status", s)
	}
	if s := string(out["failed"]); !strings.Contains(s, "TASK_STATE_FAILED") || !strings.Contains(s, "qty must be positive") {
		t.Errorf("an agent's failure: %s, want a failed task with its message", s)
	}
	if s := string(out["unknown_skill"]); !strings.Contains(s, `no skill`) {
		t.Errorf("unknown skill: %s, want the error to say there is no such skill", s)
	}
	if s := string(out["canceled"]) + string(out["got"]); strings.Count(s, "TASK_STATE_CANCELED") != 2 {
		t.Errorf("the owner's cancel: %s", s)
	}
}
