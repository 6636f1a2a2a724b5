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

// exampleRun is what the Python A2A SDK saw of the bridges example's help
// desk (examples/bridges -serve), as testdata/python_a2a_example.py
// reports it.
type exampleRun struct {
	// Submitted is a send that returns at once; Got is its task read back
	// until it ended.
	Submitted []json.RawMessage `json:"submitted"`
	Got       json.RawMessage   `json:"got"`
	Blocking  []json.RawMessage `json:"blocking"`
	Stream    []struct {
		ArtifactUpdate *struct {
			Artifact struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"artifact"`
			LastChunk bool `json:"lastChunk"`
		} `json:"artifactUpdate"`
		StatusUpdate *struct {
			Status struct {
				State string `json:"state"`
			} `json:"status"`
		} `json:"statusUpdate"`
	} `json:"stream"`
	Failed []json.RawMessage `json:"failed"`
}

// driveExample runs the Python A2A SDK speaking version against the
// example and checks a send read back, a blocking send, a streamed reply
// and the agent's refusal of a blank ticket read as a failed task.
func driveExample(t *testing.T, version string) {
	py := bridgetest.Python(t, "a2a.client")
	url := bridgetest.ServeExample(t)
	raw := bridgetest.RunClient(t, nil, py, "testdata/python_a2a_example.py", url, version)
	var r exampleRun
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if len(r.Submitted) != 1 || !strings.Contains(string(r.Submitted[0]), "TASK_STATE_SUBMITTED") {
		t.Errorf("send returning at once: %s, want the submitted task", r.Submitted)
	}
	if s := string(r.Got); !strings.Contains(s, "TASK_STATE_COMPLETED") || !strings.Contains(s, `"category": "outage"`) {
		t.Errorf("the sent task read back: %s, want it completed with an outage", s)
	}
	if len(r.Blocking) != 1 || !strings.Contains(string(r.Blocking[0]), "TASK_STATE_COMPLETED") || !strings.Contains(string(r.Blocking[0]), `"category": "billing"`) {
		t.Errorf("blocking send: %s, want the completed task with a billing verdict", r.Blocking)
	}
	var words strings.Builder
	var final string
	for _, ev := range r.Stream {
		if u := ev.ArtifactUpdate; u != nil {
			for _, p := range u.Artifact.Parts {
				words.WriteString(p.Text)
			}
		}
		if u := ev.StatusUpdate; u != nil {
			final = u.Status.State
		}
	}
	if words.String() != "Hello ada, we are on it. " || final != "TASK_STATE_COMPLETED" {
		t.Errorf("streamed reply: %q ending %q, want the six words then completed", words.String(), final)
	}
	if len(r.Failed) != 1 || !strings.Contains(string(r.Failed[0]), "TASK_STATE_FAILED") || !strings.Contains(string(r.Failed[0]), "the ticket has no text") {
		t.Errorf("a blank ticket: %s, want a failed task with the agent's message", r.Failed)
	}
}

func TestPythonA2AClientDrivesTheExampleOverA2A03(t *testing.T) {
	driveExample(t, "0.3")
}

func TestPythonA2AClientSpeakingA2A10DrivesTheExample(t *testing.T) {
	driveExample(t, "1.0")
}
