package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/wire"
)

// The memory tools and resource, served when Config.Memory is set: a model
// client remembers facts and recalls them by recency, keyword, meaning or
// both, through the same memory.Store agents use.

// memoryTemplate names one conversation's memory items.
const memoryTemplate = "laser://memory/{conversation}"

const memoryPrefix = "laser://memory/"

// RememberInput is the memory_remember tool's input.
type RememberInput struct {
	Text         string `json:"text" jsonschema:"the fact or message to remember"`
	Kind         string `json:"kind,omitempty" jsonschema:"fact (default), message, preference, event, summary, ..."`
	Conversation string `json:"conversation,omitempty" jsonschema:"the conversation id (ULID) it belongs to; a fresh one when empty"`
	Agent        string `json:"agent,omitempty" jsonschema:"the agent it is about or from"`
	Dedup        bool   `json:"dedup,omitempty" jsonschema:"remember the same fact once (content-addressed)"`
}

// RememberOutput is what memory_remember answers.
type RememberOutput struct {
	ID string `json:"id"`
}

// RecallInput is the memory_recall tool's input.
type RecallInput struct {
	Query        string `json:"query,omitempty" jsonschema:"what to rank against; empty recalls the most recent"`
	Strategy     string `json:"strategy,omitempty" jsonschema:"recent, keyword, semantic, hybrid or empty for auto"`
	Limit        int    `json:"limit,omitempty" jsonschema:"how many items at most (default 10)"`
	Conversation string `json:"conversation,omitempty" jsonschema:"only this conversation's items (and durable ones)"`
	Agent        string `json:"agent,omitempty" jsonschema:"only items about or from this agent"`
}

// RecallOutput is what memory_recall answers, best first.
type RecallOutput struct {
	Items []RecalledItem `json:"items"`
}

// RecalledItem is one recalled memory and the signals that ranked it.
type RecalledItem struct {
	ID           string   `json:"id"`
	Kind         string   `json:"kind"`
	Text         string   `json:"text"`
	Conversation string   `json:"conversation"`
	Agent        string   `json:"agent,omitempty"`
	Score        float32  `json:"score"`
	Signals      []string `json:"signals,omitempty"`
}

// addMemory registers the memory tools and resource on the server.
func (b *Bridge) addMemory(log *memory.Store) {
	mcp.AddTool(b.server, &mcp.Tool{Name: "memory_remember", Description: "Remember a fact or message in the agents' memory on the log."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in RememberInput) (*mcp.CallToolResult, RememberOutput, error) {
			scope, err := memoryScope(in.Conversation, in.Agent)
			if err != nil || strings.TrimSpace(in.Text) == "" {
				return toolError(fmt.Sprintf("memory_remember: %v", cmpErr(err, "text is empty"))), RememberOutput{}, nil
			}
			kind := memory.Fact
			if in.Kind != "" {
				kind = memory.KindOf(in.Kind)
			}
			var opts []memory.RememberOption
			if in.Dedup {
				opts = append(opts, memory.Dedup())
			}
			id, err := log.Remember(ctx, scope, kind, []byte(in.Text), opts...)
			if err != nil {
				return toolError("memory_remember: " + err.Error()), RememberOutput{}, nil
			}
			return nil, RememberOutput{ID: id.String()}, nil
		})
	mcp.AddTool(b.server, &mcp.Tool{Name: "memory_recall", Description: "Recall memories by recency, keyword (exact terms), meaning, or hybrid (both fused); each item says which signals ranked it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in RecallInput) (*mcp.CallToolResult, RecallOutput, error) {
			scope, err := memoryScope(in.Conversation, in.Agent)
			if err != nil {
				return toolError("memory_recall: " + err.Error()), RecallOutput{}, nil
			}
			strategy := memory.Strategy(in.Strategy)
			switch strategy {
			case memory.Auto, memory.Recent, memory.Keyword, memory.Semantic, memory.Hybrid:
			default:
				return toolError(fmt.Sprintf("memory_recall: strategy %q is not recent, keyword, semantic or hybrid", in.Strategy)), RecallOutput{}, nil
			}
			limit := in.Limit
			if limit <= 0 {
				limit = 10
			}
			items, err := log.Recall(ctx, scope, memory.Query{Text: in.Query, Strategy: strategy, Limit: limit})
			if err != nil {
				return toolError("memory_recall: " + err.Error()), RecallOutput{}, nil
			}
			return nil, RecallOutput{Items: recalled(items)}, nil
		})
	b.server.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "memory",
		Title:       "Memory of a conversation",
		Description: "The memory items of one conversation (and the durable ones), newest first, as JSON.",
		MIMEType:    "application/json",
		URITemplate: memoryTemplate,
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		conv, err := wire.ParseID(strings.TrimPrefix(uri, memoryPrefix))
		if !strings.HasPrefix(uri, memoryPrefix) || err != nil {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		items, err := log.Recall(ctx, memory.Scope{Conversation: conv}, memory.Query{Strategy: memory.Recent})
		if err != nil {
			return nil, err
		}
		return jsonResource(uri, RecallOutput{Items: recalled(items)})
	})
}

// memoryScope reads a tool's conversation and agent.
func memoryScope(conv, agent string) (memory.Scope, error) {
	s := memory.Scope{Agent: agent}
	if conv != "" {
		id, err := wire.ParseID(conv)
		if err != nil {
			return s, fmt.Errorf("conversation %q is not a ULID: %w", conv, err)
		}
		s.Conversation = id
	}
	return s, nil
}

func recalled(items []memory.Item) []RecalledItem {
	out := make([]RecalledItem, len(items))
	for i, it := range items {
		out[i] = RecalledItem{ID: it.ID.String(), Kind: fmt.Sprint(it.Kind), Text: string(it.Body), Conversation: it.Conversation.String(), Agent: it.Agent, Score: it.Score}
		for _, s := range it.Signals {
			out[i].Signals = append(out[i].Signals, fmt.Sprintf("%s#%d", s.Strategy, s.Rank))
		}
	}
	return out
}

// toolError is a tool result with isError: the model reads what was wrong.
func toolError(msg string) *mcp.CallToolResult {
	return failure(errors.New(msg))
}

// jsonResource is v as a JSON resource at uri.
func jsonResource(uri string, v any) (*mcp.ReadResourceResult, error) {
	text, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(text)}}}, nil
}

func cmpErr(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}
