package mcp_test

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mcpb "github.com/lasergo/laser/bridge/mcp"
	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/wire"
)

func TestAStatedDeadlineFarAheadIsCappedAtMaxTimeout(t *testing.T) {
	client := bridgetest.MemClient(t)
	orders := make(chan desk.Order, 1)
	desk.Start(t, client, &desk.Desk{Orders: orders})
	cs := connect(t, newBridge(t, client), nil)
	far := time.Date(2126, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_order", Arguments: map[string]any{"sku": "ink", "qty": 1},
		Meta: mcp.Meta{mcpb.MetaDeadline: far.Format(time.RFC3339)}})
	after := time.Now()
	if err != nil || res.IsError {
		t.Fatalf("result %+v, %v", res, err)
	}
	<-orders
	conv, _ := wire.ParseID(res.Meta[mcpb.MetaConversation].(string))
	h, err := conversation.Assemble(t.Context(), client.Transport(), conv, conversation.Options{Topics: []string{desk.DeskListenTopic}})
	if err != nil || len(h) != 1 {
		t.Fatalf("%d commands, %v", len(h), err)
	}
	d := time.UnixMicro(int64(*h[0].Envelope.DeadlineMicros))
	if d.After(after.Add(mcpb.DefaultMaxTimeout)) {
		t.Fatalf("deadline %v, want at most %v from the call", d, mcpb.DefaultMaxTimeout)
	}
}
