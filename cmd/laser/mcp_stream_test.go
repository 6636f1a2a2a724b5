package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolKinds runs laser mcp --list --json with args and returns each tool's
// kind, and what it said on stderr.
func toolKinds(t *testing.T, args ...string) (map[string]string, string) {
	t.Helper()
	code, out, errOut := laser(t, append([]string{"mcp", "--list", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tools []toolView
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	kinds := make(map[string]string, len(tools))
	for _, tl := range tools {
		kinds[tl.Name] = tl.Kind
	}
	return kinds, errOut
}

func TestMCPServesACardSkillWithAnOutputAsARequest(t *testing.T) {
	addr := deskOnRegistry(t)
	kinds, _ := toolKinds(t, "--addr", addr)
	if kinds["desk_quote"] != "request" || kinds["desk_spell"] != "request" || kinds["desk_order"] != "command" {
		t.Fatalf("kinds %v, want quote and spell requests (the card says no more), order a command", kinds)
	}
}

func TestMCPServesASkillNamedWithStreamAsAStream(t *testing.T) {
	addr := deskOnRegistry(t)
	kinds, _ := toolKinds(t, "--addr", addr, "--stream", "desk=spell")
	if kinds["desk_spell"] != "stream" || kinds["desk_quote"] != "request" {
		t.Fatalf("kinds %v, want spell a stream and quote still a request", kinds)
	}
}

func TestMCPStreamingToolReportsEachChunkAsProgress(t *testing.T) {
	addr := deskOnRegistry(t)
	url := serveMCP(t, "--addr", addr, "--stream", "desk=spell")
	progress := make(chan string, 8)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params.Message },
	}).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "desk_spell", Arguments: map[string]any{"text": "go"}}
	params.SetProgressToken("spell")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError {
		t.Fatalf("result %+v, %v", res, err)
	}
	items, _ := res.StructuredContent.(map[string]any)["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["char"] != "g" {
		t.Fatalf("structured %v, want the two letters under items", res.StructuredContent)
	}
	// The client handles notifications on a goroutine of its own: they may
	// come after the result returned.
	wait, stop := context.WithTimeout(t.Context(), 20*time.Second)
	defer stop()
	var got []string
	for len(got) < 2 {
		select {
		case p := <-progress:
			got = append(got, p)
		case <-wait.Done():
			t.Fatalf("progress %q, want one notification per letter", got)
		}
	}
	if strings.Join(got, "") != `{"char":"g"}{"char":"o"}` {
		t.Fatalf("progress %q, want one notification per letter", got)
	}
}

func TestMCPWarnsOfAStreamNoCardLists(t *testing.T) {
	addr := deskOnRegistry(t)
	_, errOut := toolKinds(t, "--addr", addr, "--stream", "desk=sing")
	if !strings.Contains(errOut, "--stream desk=sing: no served card of desk lists skill sing") {
		t.Fatalf("stderr %q, want a warning naming the unknown skill", errOut)
	}
}

func TestMCPRefusesAStreamFlagWithoutASkill(t *testing.T) {
	code, _, errOut := laser(t, "mcp", "--list", "--addr", "iggy://iggy:iggy@127.0.0.1:1/laser", "--stream", "desk")
	if code != exitUsage || !strings.Contains(errOut, `--stream "desk": want AGENT=SKILL`) {
		t.Fatalf("exit %d, stderr %q, want a usage error", code, errOut)
	}
}
