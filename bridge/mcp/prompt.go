package mcp

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt is a prompt template the bridge serves (prompts/list and
// prompts/get): messages a client puts in front of a model, with
// {{argument}} placeholders filled from the arguments of the get. The JSON
// form is what `laser mcp --prompts` reads.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Messages    []PromptMessage  `json:"messages"`
}

// PromptArgument is one argument a prompt takes; a required one must be
// given, an optional one left out renders as the empty string.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptMessage is one message of a prompt: its role ("user" or
// "assistant") and its text, where {{name}} stands for argument name.
type PromptMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// placeholder matches {{name}}, spaces inside the braces allowed.
var placeholder = regexp.MustCompile(`\{\{\s*([^{}\s]+)\s*\}\}`)

// check reports what makes p unservable: no name, a role MCP does not
// have, an argument named twice or a placeholder naming no argument.
func (p *Prompt) check() error {
	if p.Name == "" {
		return fmt.Errorf("mcp: a prompt has no name")
	}
	names := make([]string, 0, len(p.Arguments))
	for _, a := range p.Arguments {
		if a.Name == "" || slices.Contains(names, a.Name) {
			return fmt.Errorf("mcp: prompt %q: argument %q is empty or named twice", p.Name, a.Name)
		}
		names = append(names, a.Name)
	}
	if len(p.Messages) == 0 {
		return fmt.Errorf("mcp: prompt %q has no messages", p.Name)
	}
	for i, m := range p.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("mcp: prompt %q: message %d has role %q, want user or assistant", p.Name, i, m.Role)
		}
		for _, match := range placeholder.FindAllStringSubmatch(m.Text, -1) {
			if !slices.Contains(names, match[1]) {
				return fmt.Errorf("mcp: prompt %q: message %d names {{%s}}, which is no argument of the prompt", p.Name, i, match[1])
			}
		}
	}
	return nil
}

// definition is p as prompts/list shows it.
func (p *Prompt) definition() *mcp.Prompt {
	def := &mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		def.Arguments = append(def.Arguments, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return def
}

// handler renders p for a prompts/get. An unknown or missing required
// argument is an invalid-params error naming it, as the MCP specification
// asks.
func (p *Prompt) handler() mcp.PromptHandler {
	return func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args := req.Params.Arguments
		known := make([]string, len(p.Arguments))
		for i, a := range p.Arguments {
			known[i] = a.Name
			if _, ok := args[a.Name]; a.Required && !ok {
				return nil, invalidParams("prompt %q needs argument %q", p.Name, a.Name)
			}
		}
		for name := range args {
			if !slices.Contains(known, name) {
				return nil, invalidParams("prompt %q has no argument %q (its arguments: %s)", p.Name, name, strings.Join(known, ", "))
			}
		}
		res := &mcp.GetPromptResult{Description: p.Description}
		for _, m := range p.Messages {
			text := placeholder.ReplaceAllStringFunc(m.Text, func(s string) string {
				return args[placeholder.FindStringSubmatch(s)[1]]
			})
			res.Messages = append(res.Messages, &mcp.PromptMessage{Role: mcp.Role(m.Role), Content: &mcp.TextContent{Text: text}})
		}
		return res, nil
	}
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// addPrompts serves prompts; two prompts of one name are an error.
func (b *Bridge) addPrompts(prompts []Prompt) error {
	seen := make(map[string]bool, len(prompts))
	for i := range prompts {
		p := &prompts[i]
		if err := p.check(); err != nil {
			return err
		}
		if seen[p.Name] {
			return fmt.Errorf("mcp: two prompts are named %q", p.Name)
		}
		seen[p.Name] = true
		b.server.AddPrompt(p.definition(), p.handler())
	}
	return nil
}
