package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promptsFile writes text as a --prompts file.
func promptsFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prompts.json")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMCPServesThePromptsOfAFile(t *testing.T) {
	addr := deskOnRegistry(t)
	file := promptsFile(t, `[{"name":"quote_request","description":"Asks for a quote.",
		"arguments":[{"name":"sku","required":true}],
		"messages":[{"role":"user","text":"Quote {{sku}} with desk_quote."}]}]`)
	url := serveMCP(t, "--addr", addr, "--prompts", file)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "quote_request", Arguments: map[string]string{"sku": "pen"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != "Quote pen with desk_quote." {
		t.Fatalf("prompt %q", got)
	}
}

func TestMCPRefusesAPromptsFileNamingAnUndeclaredArgument(t *testing.T) {
	addr := deskOnRegistry(t)
	file := promptsFile(t, `[{"name":"p","messages":[{"role":"user","text":"Quote {{sku}}."}]}]`)
	code, _, errOut := laser(t, "mcp", "--list", "--addr", addr, "--prompts", file)
	if code != exitUsage || !strings.Contains(errOut, "{{sku}}") {
		t.Fatalf("exit %d, stderr %q, want a usage error naming the placeholder", code, errOut)
	}
}

func TestMCPRefusesAPromptsFileWithAnUnknownField(t *testing.T) {
	file := promptsFile(t, `[{"name":"p","prompt":"x","messages":[{"role":"user","text":"x"}]}]`)
	code, _, errOut := laser(t, "mcp", "--list", "--addr", "iggy://iggy:iggy@127.0.0.1:1/laser", "--prompts", file)
	if code != exitUsage || !strings.Contains(errOut, `unknown field "prompt"`) {
		t.Fatalf("exit %d, stderr %q, want a usage error naming the field", code, errOut)
	}
}
