package mcp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
)

// quotePrompt is the prompt the tests serve next to the desk's tools.
func quotePrompt() mcpb.Prompt {
	return mcpb.Prompt{
		Name: "quote_request", Title: "Ask for a quote", Description: "Asks the model to quote an item with desk_quote.",
		Arguments: []mcpb.PromptArgument{
			{Name: "sku", Description: "the item", Required: true},
			{Name: "qty", Description: "how many (default one)"},
		},
		Messages: []mcpb.PromptMessage{
			{Role: "user", Text: "Quote {{sku}} x{{ qty }} with the desk_quote tool."},
			{Role: "assistant", Text: "I will call desk_quote."},
		},
	}
}

func promptBridge(t *testing.T) *mcp.ClientSession {
	t.Helper()
	client := bridgetest.MemClient(t)
	b, err := mcpb.New(client, mcpb.Config{Operations: desk.DeskOperations(), Prompts: []mcpb.Prompt{quotePrompt()}})
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, b, nil)
}

func TestPromptsAreListedWithTheirArguments(t *testing.T) {
	cs := promptBridge(t)
	res, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Prompts) != 1 {
		t.Fatalf("prompts %+v, want one", res.Prompts)
	}
	p := res.Prompts[0]
	if p.Name != "quote_request" || p.Title != "Ask for a quote" || len(p.Arguments) != 2 || !p.Arguments[0].Required || p.Arguments[1].Required {
		t.Fatalf("prompt %+v, want quote_request with sku required and qty optional", p)
	}
}

func TestPromptGetFillsTheArguments(t *testing.T) {
	cs := promptBridge(t)
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "quote_request", Arguments: map[string]string{"sku": "pen", "qty": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 2 || res.Messages[0].Role != "user" || res.Messages[1].Role != "assistant" {
		t.Fatalf("messages %+v", res.Messages)
	}
	if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != "Quote pen x3 with the desk_quote tool." {
		t.Fatalf("first message %q", got)
	}
	if res.Description != "Asks the model to quote an item with desk_quote." {
		t.Fatalf("description %q", res.Description)
	}
}

func TestPromptGetLeavesAnOptionalArgumentEmpty(t *testing.T) {
	cs := promptBridge(t)
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "quote_request", Arguments: map[string]string{"sku": "pen"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != "Quote pen x with the desk_quote tool." {
		t.Fatalf("first message %q", got)
	}
}

// invalidParams checks err is an invalid-params error saying want.
func invalidParams(t *testing.T, err error, want string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, want) {
		t.Fatalf("error %v, want invalid params saying %q", err, want)
	}
}

func TestPromptGetWithoutARequiredArgumentIsInvalidParams(t *testing.T) {
	cs := promptBridge(t)
	_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "quote_request", Arguments: map[string]string{"qty": "3"}})
	invalidParams(t, err, `prompt "quote_request" needs argument "sku"`)
}

func TestPromptGetWithAnUnknownArgumentIsInvalidParams(t *testing.T) {
	cs := promptBridge(t)
	_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "quote_request", Arguments: map[string]string{"sku": "pen", "colour": "red"}})
	invalidParams(t, err, `no argument "colour" (its arguments: sku, qty)`)
}

func TestPromptGetOfAnUnknownPromptIsInvalidParams(t *testing.T) {
	cs := promptBridge(t)
	_, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "refund_all"})
	invalidParams(t, err, `unknown prompt "refund_all"`)
}

func TestNewRefusesAPromptNamingAnUndeclaredArgument(t *testing.T) {
	p := quotePrompt()
	p.Messages[0].Text = "Quote {{item}}."
	_, err := mcpb.New(bridgetest.MemClient(t), mcpb.Config{Prompts: []mcpb.Prompt{p}})
	if err == nil || !strings.Contains(err.Error(), "{{item}}") {
		t.Fatalf("New: %v, want the undeclared placeholder named", err)
	}
}

func TestNewRefusesTwoPromptsOfOneName(t *testing.T) {
	_, err := mcpb.New(bridgetest.MemClient(t), mcpb.Config{Prompts: []mcpb.Prompt{quotePrompt(), quotePrompt()}})
	if err == nil || !strings.Contains(err.Error(), `two prompts are named "quote_request"`) {
		t.Fatalf("New: %v", err)
	}
}

func TestNewRefusesAPromptWithAnUnknownRole(t *testing.T) {
	p := quotePrompt()
	p.Messages[1].Role = "system"
	_, err := mcpb.New(bridgetest.MemClient(t), mcpb.Config{Prompts: []mcpb.Prompt{p}})
	if err == nil || !strings.Contains(err.Error(), `role "system"`) {
		t.Fatalf("New: %v", err)
	}
}
