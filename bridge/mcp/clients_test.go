package mcp_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
)

// clientResult is a tool result as a foreign client's script reports it.
type clientResult struct {
	IsError    bool           `json:"isError"`
	Text       string         `json:"text"`
	Structured map[string]any `json:"structured"`
	Meta       map[string]any `json:"meta"`
	Threw      string         `json:"threw"`
}

// serveDesk runs the desk and the MCP bridge over streamable HTTP on
// loopback and returns the endpoint.
func serveDesk(t *testing.T) string {
	t.Helper()
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	b, err := mcpb.New(client, mcpb.Config{Operations: desk.DeskOperations(), Prompts: []mcpb.Prompt{quotePrompt()}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.HTTPHandler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// checkCalls checks the calls every foreign client makes: a good call, an
// agent's error, arguments of the wrong type, an extra and a null argument,
// and a streamed call.
func checkCalls(t *testing.T, res map[string]clientResult) {
	t.Helper()
	if r := res["good"]; r.IsError || r.Structured["cents"] != 500.0 {
		t.Errorf("good call: %+v", r)
	}
	if r := res["agent_error"]; !r.IsError || r.Threw != "" || r.Structured != nil || !strings.Contains(r.Text, "qty must be positive") {
		t.Errorf("agent error: %+v, want an error result the client reads", r)
	}
	if r := res["bad"]; !r.IsError || !strings.Contains(r.Text, "qty") {
		t.Errorf("bad argument: %+v", r)
	}
	if r := res["extra"]; !r.IsError || !strings.Contains(r.Text, "discount") {
		t.Errorf("extra argument: %+v, want an error naming it", r)
	}
	if r := res["null"]; !r.IsError || !strings.Contains(r.Text, `argument "sku" is null, want string`) {
		t.Errorf("null argument: %+v, want an error naming it", r)
	}
	if r := res["stream"]; r.IsError || len(r.Structured["items"].([]any)) != 2 {
		t.Errorf("streamed call: %+v", r)
	}
}

// clientPrompts is what a foreign client's script reports of the prompts:
// the list, a get with good arguments, one without the required argument
// and one with an argument the prompt does not have.
type clientPrompts struct {
	Prompts []struct {
		Name      string `json:"name"`
		Arguments []struct {
			Name     string `json:"name"`
			Required bool   `json:"required"`
		} `json:"arguments"`
	} `json:"prompts"`
	Good            clientPrompt `json:"prompt_good"`
	Missing         clientPrompt `json:"prompt_missing"`
	UnknownArgument clientPrompt `json:"prompt_unknown_argument"`
}

type clientPrompt struct {
	Description string `json:"description"`
	Messages    []struct {
		Role string `json:"role"`
		Text string `json:"text"`
	} `json:"messages"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// checkPrompts checks what every foreign client saw of the prompts.
func checkPrompts(t *testing.T, raw []byte) {
	t.Helper()
	var p clientPrompts
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Prompts) != 1 || p.Prompts[0].Name != "quote_request" || len(p.Prompts[0].Arguments) != 2 || !p.Prompts[0].Arguments[0].Required {
		t.Errorf("prompts %+v, want quote_request with sku required", p.Prompts)
	}
	if g := p.Good; g.Error != nil || len(g.Messages) != 2 || g.Messages[0].Role != "user" || g.Messages[0].Text != "Quote pen x3 with the desk_quote tool." {
		t.Errorf("prompt with good arguments: %+v", g)
	}
	if e := p.Missing.Error; e == nil || e.Code != -32602 || !strings.Contains(e.Message, `needs argument "sku"`) {
		t.Errorf("prompt without sku: %+v, want invalid params naming it", p.Missing)
	}
	if e := p.UnknownArgument.Error; e == nil || e.Code != -32602 || !strings.Contains(e.Message, `no argument "colour"`) {
		t.Errorf("prompt with colour: %+v, want invalid params naming it", p.UnknownArgument)
	}
}

func TestPythonMCPClientDrivesTheBridge(t *testing.T) {
	py := bridgetest.Python(t, "mcp")
	url := serveDesk(t)
	var out struct {
		Tools      map[string]map[string]any `json:"tools"`
		Progress   []string                  `json:"progress"`
		Transcript []mcpb.Record             `json:"transcript"`
		calls      map[string]clientResult
	}
	raw := bridgetest.RunClient(t, nil, py, "testdata/python_mcp.py", url)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	out.calls = decodeResults(t, raw)
	if len(out.Tools) != 4 || out.Tools["desk_quote"]["additionalProperties"] != false {
		t.Errorf("tools %v, want the desk's four with strict inputs", out.Tools)
	}
	checkCalls(t, out.calls)
	if strings.Join(out.Progress, "") != `{"char":"g"}{"char":"o"}` {
		t.Errorf("progress %q", out.Progress)
	}
	if len(out.Transcript) != 2 || out.Transcript[0].Kind != "command" || out.Transcript[1].Source != "desk" {
		t.Errorf("transcript %+v, want the call and the answer", out.Transcript)
	}
	checkPrompts(t, raw)
}

// decodeResults reads the tool results out of a client's report.
func decodeResults(t *testing.T, raw []byte) map[string]clientResult {
	t.Helper()
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]clientResult)
	for _, k := range []string{"good", "agent_error", "bad", "extra", "null", "stream"} {
		var r clientResult
		if err := json.Unmarshal(all[k], &r); err != nil {
			t.Fatalf("%s: %v: %s", k, err, all[k])
		}
		out[k] = r
	}
	return out
}

func TestTypeScriptMCPClientDrivesTheBridgeAndReadsAgentErrors(t *testing.T) {
	modules := bridgetest.NodeModules(t, "@modelcontextprotocol/sdk")
	url := serveDesk(t)
	raw := bridgetest.RunClient(t, []string{"NODE_PATH=" + modules}, "node", "testdata/typescript_mcp.cjs", url)
	var out struct {
		Tools    map[string]map[string]any `json:"tools"`
		Progress []string                  `json:"progress"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if len(out.Tools) != 4 || out.Tools["desk_quote"]["additionalProperties"] != false {
		t.Errorf("tools %v, want the desk's four with strict inputs", out.Tools)
	}
	calls := decodeResults(t, raw)
	for name, r := range calls {
		if r.Threw != "" {
			t.Errorf("%s: the TypeScript SDK threw %q", name, r.Threw)
		}
	}
	checkCalls(t, calls)
	if strings.Join(out.Progress, "") != `{"char":"g"}{"char":"o"}` {
		t.Errorf("progress %q", out.Progress)
	}
	checkPrompts(t, raw)
}

// exampleRun is what a client's script saw of the example's help desk.
type exampleRun struct {
	Tools      []string     `json:"tools"`
	Good       clientResult `json:"good"`
	AgentError clientResult `json:"agent_error"`
	Extra      clientResult `json:"extra"`
	Stream     clientResult `json:"stream"`
	Progress   []string     `json:"progress"`
}

// checkExample checks a client's run against the help desk: the tools, a
// classified ticket, the agent's refusal of an empty one read as an error
// result (the issue's own reproducer), an extra argument and a streamed
// reply.
func checkExample(t *testing.T, raw []byte) exampleRun {
	t.Helper()
	var r exampleRun
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if strings.Join(r.Tools, " ") != "helpdesk_classify helpdesk_reply" {
		t.Errorf("tools %v, want the help desk's two", r.Tools)
	}
	if r.Good.IsError || r.Good.Structured["category"] != "outage" {
		t.Errorf("classify: %+v, want an outage", r.Good)
	}
	if e := r.AgentError; !e.IsError || e.Threw != "" || e.Structured != nil || !strings.Contains(e.Text, "the ticket has no text") {
		t.Errorf("classify of a blank ticket: %+v, want the agent's refusal as an error result", e)
	}
	if e := r.Extra; !e.IsError || !strings.Contains(e.Text, "priority") {
		t.Errorf("extra argument: %+v, want an error naming it", e)
	}
	items, _ := r.Stream.Structured["items"].([]any)
	if r.Stream.IsError || len(items) != 6 || items[0] != "Hello " {
		t.Errorf("streamed reply: %+v, want its six words", r.Stream)
	}
	return r
}

func TestPythonMCPClientDrivesTheExampleOverStdio(t *testing.T) {
	py := bridgetest.Python(t, "mcp")
	raw := bridgetest.RunClient(t, nil, py, "testdata/python_mcp_example.py", bridgetest.ExampleBinary(t))
	r := checkExample(t, raw)
	if got := strings.Join(r.Progress, ""); got != "Hello ada, we are on it. " {
		t.Errorf("progress %q, want each word as its text", r.Progress)
	}
}

func TestTypeScriptMCPClientDrivesTheExampleOverStdio(t *testing.T) {
	modules := bridgetest.NodeModules(t, "@modelcontextprotocol/sdk")
	raw := bridgetest.RunClient(t, []string{"NODE_PATH=" + modules}, "node", "testdata/typescript_mcp_example.cjs", bridgetest.ExampleBinary(t))
	r := checkExample(t, raw)
	// The server sends every progress notification before the result; the
	// TypeScript SDK runs notifications a microtask late, and one that lands
	// in the same stdio read as the result finds its handler gone and is
	// dropped (modelcontextprotocol/typescript-sdk#2580): all of them, when
	// the process wrote them in one go. What arrives is the first words in
	// order; the streamable HTTP test sees every one.
	if got := strings.Join(r.Progress, ""); !strings.HasPrefix("Hello ada, we are on it. ", got) {
		t.Errorf("progress %q, want the first words in order", r.Progress)
	}
}
