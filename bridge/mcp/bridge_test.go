package mcp_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lasergo/laser/bridge"
	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func newBridge(t *testing.T, client *runtime.Client) *mcpb.Bridge {
	t.Helper()
	b, err := mcpb.New(client, mcpb.Config{Operations: desk.DeskOperations()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// connect is an MCP client session on b over the SDK's in-memory
// transport.
func connect(t *testing.T, b *mcpb.Bridge, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := b.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// connectHTTP is an MCP client session on b over streamable HTTP on
// loopback.
func connectHTTP(t *testing.T, b *mcpb.Bridge, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(b.HTTPHandler())
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func tools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]*mcp.Tool)
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// resolve reads a schema as the client received it.
func resolve(t *testing.T, schema any) *jsonschema.Resolved {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("schema %s does not resolve: %v", raw, err)
	}
	return rs
}

func TestToolsListEveryOperationWithItsGeneratedSchemas(t *testing.T) {
	cs := connect(t, newBridge(t, bridgetest.MemClient(t)), nil)
	got := tools(t, cs)
	if len(got) != 4 {
		t.Fatalf("%d tools, want 4 (quote, order, restocked, spell)", len(got))
	}
	quote := got["desk_quote"]
	if quote == nil || !strings.HasPrefix(quote.Description, "Quote prices an item at 250 cents each.") {
		t.Fatalf("desk_quote %+v, want the handler's doc comment", quote)
	}
	in := resolve(t, quote.InputSchema)
	if err := in.Validate(map[string]any{"sku": "pen", "qty": 2.0}); err != nil {
		t.Fatalf("a valid input is refused: %v", err)
	}
	if err := in.Validate(map[string]any{"sku": "pen"}); err == nil {
		t.Fatal("an input without the required qty validates")
	}
	raw, _ := json.Marshal(quote.InputSchema)
	if !strings.Contains(string(raw), `"description":"SKU names the item."`) {
		t.Fatalf("input schema %s lacks the field's doc comment", raw)
	}
	out := resolve(t, quote.OutputSchema)
	if err := out.Validate(map[string]any{"sku": "pen", "cents": 500.0}); err != nil {
		t.Fatalf("a quote does not validate against the output schema: %v", err)
	}
	for _, name := range []string{"desk_order", "desk_restocked", "desk_spell"} {
		resolve(t, got[name].InputSchema)
		resolve(t, got[name].OutputSchema)
	}
}

func TestCallingARequestToolReturnsTheTypedAnswer(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		desk.Start(t, client, &desk.Desk{})
		b := newBridge(t, client)
		for name, cs := range map[string]*mcp.ClientSession{"in-memory": connect(t, b, nil), "http": connectHTTP(t, b, nil)} {
			t.Run(name, func(t *testing.T) {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_quote", Arguments: map[string]any{"sku": "pen", "qty": 4}})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError {
					t.Fatalf("isError: %v", res.Content)
				}
				got, _ := res.StructuredContent.(map[string]any)
				if got["sku"] != "pen" || got["cents"] != 1000.0 {
					t.Fatalf("structured %v, want the quote", res.StructuredContent)
				}
				var fromText map[string]any
				if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &fromText); err != nil || fromText["cents"] != 1000.0 {
					t.Fatalf("text content %v (%v), want the quote as JSON", res.Content, err)
				}
			})
		}
	})
}

func TestAnAgentsRejectionIsAToolError(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	cs := connect(t, newBridge(t, client), nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_quote", Arguments: map[string]any{"sku": "pen", "qty": 0}})
	if err != nil {
		t.Fatalf("a rejected input became a protocol error: %v", err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "qty must be positive") {
		t.Fatalf("result %+v, want isError with the agent's message", res)
	}
}

func TestArgumentsOutsideTheSchemaAreAToolErrorAndNeverSent(t *testing.T) {
	client := bridgetest.MemClient(t)
	if err := client.Transport().EnsureTopics(t.Context(), 1, desk.DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newBridge(t, client), nil)
	for name, args := range map[string]any{
		"missing field": map[string]any{"sku": "pen"},
		"wrong type":    map[string]any{"sku": "pen", "qty": "four"},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_quote", Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError {
				t.Fatalf("result %+v, want isError", res)
			}
		})
	}
	if n, _ := client.Transport().NextOffset(t.Context(), desk.DeskListenTopic, 0); n != 0 {
		t.Fatalf("%d commands reached the agent", n)
	}
}

func TestAStreamingToolSendsProgressPerChunk(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		desk.Start(t, client, &desk.Desk{})
		progress := make(chan string, 8)
		cs := connect(t, newBridge(t, client), &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			progress <- r.Params.Message
		}})
		params := &mcp.CallToolParams{Name: "desk_spell", Arguments: map[string]any{"text": "go"}}
		params.SetProgressToken("spell-1")
		res, err := cs.CallTool(t.Context(), params)
		if err != nil || res.IsError {
			t.Fatalf("result %+v, %v", res, err)
		}
		items, _ := res.StructuredContent.(map[string]any)["items"].([]any)
		if len(items) != 2 || items[0].(map[string]any)["char"] != "g" {
			t.Fatalf("items %v, want g and o", items)
		}
		// Notifications reach the client's handler on their own goroutine,
		// possibly after the result.
		for _, want := range []string{`{"char":"g"}`, `{"char":"o"}`} {
			select {
			case got := <-progress:
				if got != want {
					t.Fatalf("progress %s, want %s", got, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no progress notification %s", want)
			}
		}
	})
}

func TestAStreamThatFailsIsAToolErrorWithTheItemsBeforeIt(t *testing.T) {
	client := bridgetest.MemClient(t)
	desk.Start(t, client, &desk.Desk{})
	cs := connect(t, newBridge(t, client), nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_spell", Arguments: map[string]any{"text": "ab!c"}})
	if err != nil {
		t.Fatalf("a failed stream became a protocol error: %v", err)
	}
	items, _ := res.Meta[mcpb.MetaItems].([]any)
	if !res.IsError || len(items) != 2 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "cannot spell") {
		t.Fatalf("result %+v, want isError with a and b", res)
	}
	if res.StructuredContent != nil {
		t.Fatalf("an error result carries structured content %v, which strict clients check against the output schema", res.StructuredContent)
	}
}

func TestAOneWayToolPutsACommandOnTheLogWithTheCallsDeadline(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		orders := make(chan desk.Order, 1)
		desk.Start(t, client, &desk.Desk{Orders: orders})
		cs := connect(t, newBridge(t, client), nil)
		deadline := time.Now().Add(5 * time.Minute).Truncate(time.Microsecond)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_order", Arguments: map[string]any{"sku": "ink", "qty": 2},
			Meta: mcp.Meta{mcpb.MetaDeadline: deadline.Format(time.RFC3339Nano)}})
		if err != nil || res.IsError {
			t.Fatalf("result %+v, %v", res, err)
		}
		if got := <-orders; got != (desk.Order{SKU: "ink", Qty: 2}) {
			t.Fatalf("the desk took %+v", got)
		}
		conv, err := wire.ParseID(res.Meta[mcpb.MetaConversation].(string))
		if err != nil {
			t.Fatal(err)
		}
		h, err := conversation.Assemble(t.Context(), client.Transport(), conv, conversation.Options{Topics: []string{desk.DeskListenTopic}})
		if err != nil || len(h) != 1 {
			t.Fatalf("%d commands, %v", len(h), err)
		}
		e := h[0].Envelope
		if e.DeadlineMicros == nil || *e.DeadlineMicros != uint64(deadline.UnixMicro()) {
			t.Fatalf("envelope deadline %v, want %d", e.DeadlineMicros, deadline.UnixMicro())
		}
		if hops, _ := bridge.Hops(e.Metadata); len(hops) != 1 || hops[0] != mcpb.DefaultID {
			t.Fatalf("hops %v", hops)
		}
	})
}

func TestAnEventToolPublishesTheEventTheAgentHandles(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		restocks := make(chan desk.Restock, 1)
		desk.Start(t, client, &desk.Desk{Restocks: restocks})
		cs := connect(t, newBridge(t, client), nil)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_restocked", Arguments: map[string]any{"sku": "ink"}})
		if err != nil || res.IsError {
			t.Fatalf("result %+v, %v", res, err)
		}
		if res.StructuredContent.(map[string]any)["accepted"] != true {
			t.Fatalf("structured %v", res.StructuredContent)
		}
		if got := <-restocks; got.SKU != "ink" {
			t.Fatalf("the desk noted %+v", got)
		}
	})
}

func TestACallWithoutADeadlineGetsTheBridgesTimeout(t *testing.T) {
	client := bridgetest.MemClient(t)
	orders := make(chan desk.Order, 1)
	desk.Start(t, client, &desk.Desk{Orders: orders})
	b, err := mcpb.New(client, mcpb.Config{Operations: desk.DeskOperations(), Timeout: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, b, nil)
	before := time.Now()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_order", Arguments: map[string]any{"sku": "ink", "qty": 1}})
	after := time.Now()
	if err != nil || res.IsError {
		t.Fatalf("result %+v, %v", res, err)
	}
	<-orders
	conv, _ := wire.ParseID(res.Meta[mcpb.MetaConversation].(string))
	h, _ := conversation.Assemble(t.Context(), client.Transport(), conv, conversation.Options{Topics: []string{desk.DeskListenTopic}})
	d := time.UnixMicro(int64(*h[0].Envelope.DeadlineMicros))
	if d.Before(before.Add(90*time.Second).Truncate(time.Microsecond)) || d.After(after.Add(90*time.Second)) {
		t.Fatalf("deadline %v, want 90s after the call", d)
	}
}

func TestABadDeadlineIsAToolError(t *testing.T) {
	client := bridgetest.MemClient(t)
	cs := connect(t, newBridge(t, client), nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_order", Arguments: map[string]any{"sku": "ink", "qty": 1},
		Meta: mcp.Meta{mcpb.MetaDeadline: "tomorrow"}})
	if err != nil || !res.IsError {
		t.Fatalf("result %+v, %v", res, err)
	}
}

func TestACallThatAlreadyPassedTheBridgeIsRefused(t *testing.T) {
	client := bridgetest.MemClient(t)
	cs := connect(t, newBridge(t, client), nil)
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_order", Arguments: map[string]any{"sku": "ink", "qty": 1},
		Meta: mcp.Meta{mcpb.MetaHops: []any{"a2a-gateway", mcpb.DefaultID}}})
	if err == nil || !strings.Contains(err.Error(), "bridge loop") {
		t.Fatalf("err = %v, want the loop refused", err)
	}
}

func TestACallsConversationIsReadableAsATranscript(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		desk.Start(t, client, &desk.Desk{})
		b, err := mcpb.New(client, mcpb.Config{Operations: desk.DeskOperations(), TranscriptTopics: []string{desk.DeskListenTopic, runtime.TopicResponses}})
		if err != nil {
			t.Fatal(err)
		}
		cs := connect(t, b, nil)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_quote", Arguments: map[string]any{"sku": "pen", "qty": 1}})
		if err != nil || res.IsError {
			t.Fatalf("result %+v, %v", res, err)
		}
		conv, _ := wire.ParseID(res.Meta[mcpb.MetaConversation].(string))
		rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: mcpb.TranscriptURI(conv)})
		if err != nil {
			t.Fatal(err)
		}
		var records []mcpb.Record
		if err := json.Unmarshal([]byte(rr.Contents[0].Text), &records); err != nil {
			t.Fatal(err)
		}
		if len(records) != 2 || records[0].Kind != "command" || records[0].Operation != "quote" || records[1].Source != "desk" {
			t.Fatalf("transcript %+v, want the command then the desk's answer", records)
		}
		if !strings.Contains(string(records[1].Body), `"cents":250`) {
			t.Fatalf("answer body %s", records[1].Body)
		}
		if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: mcpb.TranscriptURI(client.IDs().NewID())}); err == nil {
			t.Fatal("an unknown conversation was read")
		}
	})
}
