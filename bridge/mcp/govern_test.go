package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/runtime"
)

func TestAToolCallTheGovernorBlocksIsAToolErrorAndNeverSent(t *testing.T) {
	policy := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		if a.Kind == effect.BridgeCall && a.Operation == "quote" {
			return govern.Block("no quotes from outside"), nil
		}
		return govern.Allow(), nil
	})
	client := runtime.NewClient(embedlog.New("bridges", embedlog.Config{}), runtime.ClientConfig{EffectGate: govern.NewGate(policy, govern.Config{})})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	desk.Start(t, client, &desk.Desk{})
	cs := connect(t, newBridge(t, client), nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_quote", Arguments: map[string]any{"sku": "pen", "qty": 4}})
	if err != nil {
		t.Fatalf("a blocked call became a protocol error: %v", err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "no quotes from outside") {
		t.Fatalf("result %+v, want isError with the policy's reason", res)
	}
	if n, _ := client.Transport().NextOffset(t.Context(), desk.DeskListenTopic, 0); n != 0 {
		t.Fatalf("%d commands reached the agent", n)
	}
}
