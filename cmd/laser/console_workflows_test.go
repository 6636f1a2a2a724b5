package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/workflow"
)

// runWorkflows runs two workflows on s's server, journaled on the default
// journal: one completes (a JSON output, then a text one), the other fails
// its second step and compensates the first. It returns their run ids.
func runWorkflows(t *testing.T, s *seeded) (completed, compensated string) {
	t.Helper()
	w := featuretest.NewWorkflowWorld(featuretest.NewWorld(t, s.tr))
	w.Worker("pricer", "", func(string) (string, bool) { return `{"total":12.5,"currency":"EUR"}`, true })
	w.Worker("writer", "", func(body string) (string, bool) { return "quoted: " + body, true })
	wf := w.Workflow(
		workflow.Step{Label: "price", Route: registry.To("pricer")},
		workflow.Step{Label: "write", After: []string{"price"}, Route: registry.To("writer"), Input: func(map[string][]byte) []byte { return []byte("o-42") }},
	)
	wf.Journal, wf.Budget.Invocations = runtime.TopicWorkflowJournal, 10
	out, err := wf.Run(w.Ctx, w.Client)
	if err != nil {
		t.Fatal(err)
	}
	failing := w.Workflow(
		workflow.Step{Label: "price", Route: registry.To("pricer"), Compensate: func(out []byte) []byte { return append([]byte("undo "), out...) }},
		workflow.Step{Label: "write", After: []string{"price"}, Route: registry.To("writer"), Verify: func([]byte) bool { return false }},
	)
	failing.Journal, failing.RunID = runtime.TopicWorkflowJournal, w.Client.IDs().NewID()
	if _, err := failing.Run(w.Ctx, w.Client); err == nil {
		t.Fatal("the failing workflow completed")
	}
	return out.RunID.String(), failing.RunID.String()
}

func TestConsoleListsWorkflowRunsWithStatusAndDecodedOutputs(t *testing.T) {
	s := seed(t)
	done, undone := runWorkflows(t, s)
	srv := consoleServer(t, s, consoleConfig{})
	page := wantPage(t, srv, "/workflows", http.StatusOK,
		`data-run="`+done+`"`, `data-run="`+undone+`"`,
		`<span class="status status-completed">completed</span>`, `<span class="status status-compensated">compensated</span>`,
		"2 of 2", "10 invocation(s)", "2 invocation(s)",
		"&#34;currency&#34;: &#34;EUR&#34;", `<small class="format">json</small>`,
		"quoted: o-42", `<small class="format">text</small>`,
		"<summary>journal bytes</summary>", `data-step="write"`)
	// The Go orchestrator's plain twin of each step record is not shown
	// beside it.
	if n := strings.Count(page, `data-step="price"`); n != 2 {
		t.Fatalf("step price shows %d times over two runs:\n%s", n, page)
	}
}

func TestDecodeOutputSaysWhatItShows(t *testing.T) {
	for _, tc := range []struct{ in, out, format string }{
		{`{"a":1}`, "{\n  \"a\": 1\n}", "json"},
		{"plain words", "plain words", "text"},
		{"\xa1\x61\x61\x01", "{\n  \"a\": 1\n}", "cbor as json"},
		{"\x00\xff\xfe", "3 bytes", "bytes"},
		{"", "(empty)", "text"},
	} {
		if out, format := decodeOutput([]byte(tc.in)); out != tc.out || format != tc.format {
			t.Errorf("decodeOutput(%q) = %q, %q; want %q, %q", tc.in, out, format, tc.out, tc.format)
		}
	}
}
