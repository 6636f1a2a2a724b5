package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
)

// memoryBridge serves the memory tools over a fresh memory log.
func memoryBridge(t *testing.T, client *runtime.Client) (*mcp.ClientSession, *memory.Store) {
	t.Helper()
	log := memory.New(client, memory.Config{})
	b, err := mcpb.New(client, mcpb.Config{Memory: log})
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, b, nil), log
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func recalledTexts(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	if res.IsError {
		t.Fatalf("recall isError: %v", res.Content)
	}
	var out mcpb.RecallOutput
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, it := range out.Items {
		texts = append(texts, it.Text)
	}
	return texts
}

// TestMemoryToolsRememberAndRecallThroughTheLog: what a model client
// remembers over MCP is in the agents' memory log, and recall ranks it
// with memory's strategies (keyword puts the exact term first).
func TestMemoryToolsRememberAndRecallThroughTheLog(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		cs, log := memoryBridge(t, client)
		conv := client.IDs().NewID().String()
		for _, text := range []string{"the invoice INV-77 was disputed", "a routine turn with nothing notable"} {
			if res := call(t, cs, "memory_remember", map[string]any{"text": text, "conversation": conv}); res.IsError {
				t.Fatalf("remember: %v", res.Content)
			}
		}
		got := recalledTexts(t, call(t, cs, "memory_recall", map[string]any{"query": "INV-77", "strategy": "keyword", "conversation": conv}))
		if len(got) == 0 || got[0] != "the invoice INV-77 was disputed" {
			t.Fatalf("keyword recall over MCP = %q", got)
		}
		// The same items, recalled by the library: one source of truth.
		items, err := log.Recall(t.Context(), memory.Scope{}, memory.Query{Strategy: memory.Recent})
		if err != nil || len(items) != 2 {
			t.Fatalf("the log holds %d items (%v), want 2", len(items), err)
		}
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "laser://memory/" + conv})
		if err != nil || !strings.Contains(res.Contents[0].Text, "INV-77") {
			t.Fatalf("memory resource: %v %v", res, err)
		}
	})
}

func TestMemoryToolsAnswerBadInputAsToolErrors(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		cs, _ := memoryBridge(t, client)
		for name, args := range map[string]map[string]any{
			"memory_remember": {"text": "  "},
			"memory_recall":   {"strategy": "psychic"},
		} {
			if res := call(t, cs, name, args); !res.IsError {
				t.Errorf("%s %v: not an isError result: %v", name, args, res.Content)
			}
		}
		if res := call(t, cs, "memory_recall", map[string]any{"conversation": "not-a-ulid"}); !res.IsError {
			t.Errorf("a bad conversation id was accepted")
		}
	})
}
