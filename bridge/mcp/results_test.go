package mcp_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
)

// Clients check structured content against the output schema even on an
// error result (the TypeScript SDK throws -32602): an agent error must be
// text the model reads, with the AGDX error in _meta.
func TestAnAgentErrorResultCarriesNoStructuredContent(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	cs := connect(t, newBridge(t, client), nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_quote", Arguments: map[string]any{"sku": "pen", "qty": 0}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || res.StructuredContent != nil {
		t.Fatalf("result isError %v structured %v, want an error with no structured content", res.IsError, res.StructuredContent)
	}
	detail, _ := res.Meta[mcpb.MetaError].(map[string]any)
	if detail["code"] == nil || !strings.Contains(detail["message"].(string), "qty must be positive") {
		t.Fatalf("_meta %s = %v, want the agent's error", mcpb.MetaError, res.Meta[mcpb.MetaError])
	}
}

func TestAToolsInputSchemaRefusesExtraArguments(t *testing.T) {
	client := bridgetest.MemClient(t)
	if err := client.Transport().EnsureTopics(t.Context(), 1, desk.DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newBridge(t, client), nil)
	quote := tools(t, cs)["desk_quote"]
	if schema, _ := quote.InputSchema.(map[string]any); schema["additionalProperties"] != false {
		t.Fatalf("input schema %v, want additionalProperties false", quote.InputSchema)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_quote", Arguments: map[string]any{"sku": "pen", "qty": 1, "discount": 100}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "discount") {
		t.Fatalf("result %+v, want an error naming the extra argument", res)
	}
	if n, _ := client.Transport().NextOffset(t.Context(), desk.DeskListenTopic, 0); n != 0 {
		t.Fatalf("%d commands reached the agent", n)
	}
}
