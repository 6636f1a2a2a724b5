package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// deskOnRegistry runs the bridges' test desk on a test server and publishes
// its card on the registry; it returns the server's address.
func deskOnRegistry(t *testing.T) string {
	t.Helper()
	addr, _ := deskOnRegistrySigned(t, nil)
	return addr
}

// deskOnRegistrySigned is deskOnRegistry with the card signed by key (nil:
// unsigned); it also returns the client, to publish more cards.
func deskOnRegistrySigned(t *testing.T, key *sign.Key) (string, *runtime.Client) {
	t.Helper()
	return deskServed(t, key, func(client *runtime.Client) { desk.Start(t, client, &desk.Desk{}) })
}

// deskServed is deskOnRegistrySigned with the desk started by start.
func deskServed(t *testing.T, key *sign.Key, start func(*runtime.Client)) (string, *runtime.Client) {
	t.Helper()
	addr := "iggy://iggy:iggy@" + iggytest.Start(t, iggytest.Config{}).Addr() + "/laser"
	tr, err := iggy.Dial(t.Context(), addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	start(client)
	if err := registry.PublishCard(t.Context(), client, "", desk.DeskAgentID, desk.DeskCard(), key); err != nil {
		t.Fatal(err)
	}
	return addr, client
}

func TestMCPListsTheRegistrysSkillsAsTools(t *testing.T) {
	addr := deskOnRegistry(t)
	code, out, errOut := laser(t, "mcp", "--list", "--json", "--addr", addr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tools []toolView
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != "desk_quote desk_order desk_spell" {
		t.Fatalf("tools %q, want the desk's three skills", got)
	}
}

func TestMCPServesTheRegistrysAgentsOverHTTP(t *testing.T) {
	addr := deskOnRegistry(t)
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"mcp", "--http", "127.0.0.1:0", "--addr", addr}, io.Discard, pw)
		_ = pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("laser mcp exited %d", code)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	_, url, ok := strings.Cut(strings.TrimSpace(line), " on ")
	if !ok {
		t.Fatalf("laser mcp said %q, want where it serves", line)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCtx, stop := context.WithTimeout(t.Context(), 20*time.Second)
	defer stop()
	res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "desk_quote", Arguments: map[string]any{"sku": "pen", "qty": 2}})
	if err != nil || res.IsError {
		t.Fatalf("result %+v, %v", res, err)
	}
	got, _ := res.StructuredContent.(map[string]any)["result"].(map[string]any)
	if got["cents"] != 500.0 {
		t.Fatalf("structured %v, want the quote under result", res.StructuredContent)
	}
}
