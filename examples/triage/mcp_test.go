package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/operation"
	"github.com/lasergo/laser/runtime"
)

// triageTools serves the triage agents' operations over streamable HTTP on
// loopback, with the classifier running, and returns an MCP client session.
func triageTools(t *testing.T, client *runtime.Client) *mcp.ClientSession {
	t.Helper()
	if err := client.Transport().EnsureTopics(t.Context(), 1, ClassifierListenTopic, IntakeListenTopic, ResolverListenTopic, AuditorListenTopic); err != nil {
		t.Fatal(err)
	}
	classifier, err := NewClassifierAgent(client, &Classifier{Report: newReport(func(string) {})})
	if err != nil {
		t.Fatal(err)
	}
	h := classifier.Start(context.WithoutCancel(t.Context()))
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	if err := h.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	var ops []operation.Info
	for _, agent := range [][]operation.Info{IntakeOperations(), ClassifierOperations(), ResolverOperations(), AuditorOperations()} {
		ops = append(ops, agent...)
	}
	b, err := mcpb.New(client, mcpb.Config{Name: "triage", Operations: ops})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.HTTPHandler())
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "triage-test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestMCPClientListsTheTriageAgentsAsTools(t *testing.T) {
	cs := triageTools(t, bridgetest.MemClient(t))
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		names[tl.Name] = tl
		for _, schema := range []any{tl.InputSchema, tl.OutputSchema} {
			raw, _ := json.Marshal(schema)
			var s jsonschema.Schema
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("%s: %v", tl.Name, err)
			}
			if _, err := s.Resolve(nil); err != nil {
				t.Fatalf("%s: schema %s does not resolve: %v", tl.Name, raw, err)
			}
		}
	}
	for _, want := range []string{"intake_submit", "classifier_classify", "resolver_resolve", "auditor_ticket_triaged"} {
		if names[want] == nil {
			t.Fatalf("tools %v lack %s", names, want)
		}
	}
	raw, _ := json.Marshal(names["classifier_classify"].OutputSchema)
	if want := `"refund_cents":{"description":"0 when no refund is due","type":"integer"}`; !strings.Contains(string(raw), want) {
		t.Fatalf("classify output schema %s lacks %s", raw, want)
	}
}

func TestMCPClientClassifiesATicket(t *testing.T) {
	bridgetest.EachTransport(t, func(t *testing.T, client *runtime.Client) {
		cs := triageTools(t, client)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "classifier_classify",
			Arguments: map[string]any{"id": "T-1", "customer": "ada", "text": "I was charged twice"}})
		if err != nil || res.IsError {
			t.Fatalf("result %+v, %v", res, err)
		}
		var got Classification
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		if got != (Classification{Category: "billing", Priority: "high", Refund: 1999}) {
			t.Fatalf("classification %+v", got)
		}
	})
}

func TestMCPClientGetsAToolErrorForATicketWithoutText(t *testing.T) {
	cs := triageTools(t, bridgetest.MemClient(t))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "classifier_classify", Arguments: map[string]any{"id": "T-2", "customer": "bob"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Fatalf("result %+v, want isError for the missing text", res)
	}
}
