// Package mcp serves laser agents as Model Context Protocol tools with the
// official go-sdk: each operation of the generated operation table
// (<Agent>Operations) becomes a tool whose input and output JSON Schemas
// lasergen generated from the Go types. A tools/call becomes a durable
// request on the log (a command or an event for one-way operations) carrying
// the call's deadline, the typed reply is the tool result (structured
// content and its JSON text), an agent's failure is a result with isError,
// and a streaming operation reports each chunk as a progress notification.
// Each call's conversation is readable as a resource, and configured prompt
// templates are served as MCP prompts. Streamable HTTP and stdio serve it.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// DefaultID is the bridge's agent id when Config.ID is empty.
const DefaultID = "mcp-gateway"

// MetaConversation is the _meta key of a tool result naming the call's
// conversation; the transcript resource reads it back.
const MetaConversation = "laser/conversation"

// MetaDeadline is the _meta key by which a client can state a call's
// deadline (RFC 3339): MCP itself carries none.
const MetaDeadline = "laser/deadline"

// DefaultMaxTimeout is Config.MaxTimeout's default.
const DefaultMaxTimeout = 10 * time.Minute

// MetaError is the _meta key of an error result carrying the agent's AGDX
// error: its code, message and whether a retry may succeed.
const MetaError = "laser/error"

// MetaItems is the _meta key of a failed stream's result carrying the items
// that arrived before the failure.
const MetaItems = "laser/items"

// MetaHops is the _meta key of the bridge path a call came by.
const MetaHops = "bridge_hops"

// Config configures a Bridge.
type Config struct {
	// ID is the bridge's agent id: the sender of every call and its entry
	// on the bridge_hops path. Default DefaultID.
	ID string
	// Name and Version describe the server to MCP clients; default
	// "laser" and "0.1.0".
	Name, Version string
	// Operations are the tools: one or more agents' generated
	// <Agent>Operations, concatenated.
	Operations []operation.Info
	// Timeout bounds a call that states no deadline; default
	// runtime.DefaultRequestTimeout.
	Timeout time.Duration
	// MaxTimeout caps how far ahead a deadline stated in _meta may lie: a
	// later one is brought forward to now plus MaxTimeout, so no caller
	// holds a call (and the session closing behind it) open for years.
	// Default DefaultMaxTimeout.
	MaxTimeout time.Duration
	// TranscriptTopics are the topics a conversation's transcript is read
	// from; default every topic the operations send to or are answered on,
	// then conversation.DefaultTopics: both sides of every call.
	TranscriptTopics []string
	// Key signs every call the bridge puts on the log. When the client
	// verifies (ClientConfig.Verifier) a transcript shows only records that
	// verify, so the bridge's own calls need it to appear; enroll Key's
	// principal for the bridge's ID (sign.Registry.AllowSource).
	Key *sign.Key
	// Logger receives the server's log; default the client's.
	Logger *slog.Logger
	// Memory, when set, adds the memory_remember and memory_recall tools
	// and the laser://memory/{conversation} resource over this log.
	Memory *memory.Store
	// DeadLetterTopic is where the agents park what they refuse; a call
	// left unanswered says why when its agent parked it there (an agent
	// that verifies signatures parks an unsigned call). Default
	// runtime.TopicDLQ.
	DeadLetterTopic string
	// Prompts are served as MCP prompts (prompts/list, prompts/get), their
	// {{argument}} placeholders filled from the get's arguments. A prompt
	// without a name or messages, with a role other than user or
	// assistant, or naming an argument it does not declare makes New fail.
	Prompts []Prompt
}

// Bridge is an MCP server over a laser client.
type Bridge struct {
	client *runtime.Client
	cfg    Config
	tools  []*tool
	server *mcp.Server
}

// New builds the server: one tool per operation, the transcript resource
// template and the prompts.
func New(client *runtime.Client, cfg Config) (*Bridge, error) {
	if cfg.ID == "" {
		cfg.ID = DefaultID
	}
	if cfg.Name == "" {
		cfg.Name = "laser"
	}
	if cfg.Version == "" {
		cfg.Version = "0.1.0"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = runtime.DefaultRequestTimeout
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = DefaultMaxTimeout
	}
	if cfg.MaxTimeout < cfg.Timeout {
		cfg.MaxTimeout = cfg.Timeout
	}
	if cfg.DeadLetterTopic == "" {
		cfg.DeadLetterTopic = runtime.TopicDLQ
	}
	if len(cfg.TranscriptTopics) == 0 {
		cfg.TranscriptTopics = transcriptTopics(cfg.Operations)
	}
	if cfg.Logger == nil {
		cfg.Logger = client.Logger()
	}
	b := &Bridge{client: client, cfg: cfg}
	b.server = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Version: cfg.Version},
		&mcp.ServerOptions{Logger: cfg.Logger})
	seen := make(map[string]bool)
	for _, info := range cfg.Operations {
		t, err := newTool(info)
		if err != nil {
			return nil, err
		}
		if seen[t.def.Name] {
			return nil, fmt.Errorf("mcp: two operations make tool %q", t.def.Name)
		}
		seen[t.def.Name] = true
		b.tools = append(b.tools, t)
		b.server.AddTool(t.def, b.handler(t))
	}
	b.server.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "conversation",
		Title:       "Conversation transcript",
		Description: "The records of one conversation on the log, in order, as JSON; a tool result's _meta names its conversation.",
		MIMEType:    "application/json",
		URITemplate: transcriptTemplate,
	}, b.readTranscript)
	if cfg.Memory != nil {
		b.addMemory(cfg.Memory)
	}
	if err := b.addPrompts(cfg.Prompts); err != nil {
		return nil, err
	}
	return b, nil
}

// Server returns the MCP server, for a transport of the caller's choosing
// (mcp.NewInMemoryTransports in tests).
func (b *Bridge) Server() *mcp.Server { return b.server }

// HTTPHandler serves the bridge over MCP's streamable HTTP transport.
func (b *Bridge) HTTPHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.server }, nil)
}

// ServeStdio serves one client over stdin and stdout until it disconnects
// or ctx ends: how desktop MCP clients run a local server.
func (b *Bridge) ServeStdio(ctx context.Context) error {
	return b.server.Run(ctx, &mcp.StdioTransport{})
}

// Tools returns the tool definitions, in operation order.
func (b *Bridge) Tools() []*mcp.Tool {
	out := make([]*mcp.Tool, len(b.tools))
	for i, t := range b.tools {
		out[i] = t.def
	}
	return out
}

// hops is the call's bridge path: the client's _meta bridge_hops with this
// bridge entered.
func (b *Bridge) hops(meta mcp.Meta) ([]string, error) {
	prev, err := bridge.HopsFromJSON(meta[MetaHops])
	if err != nil {
		return nil, err
	}
	return bridge.Enter(b.cfg.ID, prev)
}

// deadline is the call's: the earliest of its context's deadline and the
// one its _meta states (at most MaxTimeout from now), or Timeout from now
// without either. A _meta deadline that is no RFC 3339 time is an input
// error.
func (b *Bridge) deadline(ctx context.Context, meta mcp.Meta) (time.Time, error) {
	d, ok := ctx.Deadline()
	if s, present := meta[MetaDeadline]; present {
		text, _ := s.(string)
		md, err := time.Parse(time.RFC3339Nano, text)
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: _meta %s: %v is no RFC 3339 time", bridge.ErrInput, MetaDeadline, s)
		}
		if limit := b.client.Clock().Now().Add(b.cfg.MaxTimeout); md.After(limit) {
			md = limit
		}
		if !ok || md.Before(d) {
			d, ok = md, true
		}
	}
	if !ok {
		d = b.client.Clock().Now().Add(b.cfg.Timeout)
	}
	return d, nil
}

// transcriptTopics are the topics the operations' calls and answers are on,
// then the default conversation topics, each once.
func transcriptTopics(ops []operation.Info) []string {
	var topics []string
	add := func(t string) {
		if t != "" && !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	for _, op := range ops {
		add(op.Topic)
		add(op.ReplyTopic)
	}
	for _, t := range conversation.DefaultTopics {
		add(t)
	}
	return topics
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
