package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets the test binary stand in for `bridges -stdio`, so the stdio
// test launches a real process as a desktop client does.
func TestMain(m *testing.M) {
	if os.Getenv("LASER_BRIDGES_STDIO") == "1" {
		if err := serveStdio(context.Background()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestBridgesExampleDrivesTheHelpdeskOverMCPAGUIAndA2A(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`mcp: helpdesk_classify -> {"category":"outage","urgent":true}`,
		`mcp: helpdesk_classify without text -> isError=true: helpdesk: the ticket has no text (invalid_request)`,
		`mcp: progress "Hello "`,
		`mcp: progress "it. "`,
		`ag-ui: RUN_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END RUN_FINISHED`,
		`ag-ui: the assistant said "Hello there, we are on it."`,
		`a2a: message/send -> task submitted`,
		`a2a: tasks/get -> completed {"kind":"data","data":{"category":"billing","urgent":false}}`,
		`desktop MCP client config:`,
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w+"\n") {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &cfg); err != nil {
		t.Fatalf("the last line is no config: %v", err)
	}
	if s := cfg.MCPServers["laser-helpdesk"]; s.Command != "go" || !strings.Contains(strings.Join(s.Args, " "), "run ./examples/bridges -stdio") {
		t.Fatalf("config %+v", cfg)
	}
}

func TestBridgesExampleServesMCPOverStdio(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "LASER_BRIDGES_STDIO=1")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "helpdesk_classify", Arguments: Ticket{Customer: "cy", Text: "refund please"}})
	if err != nil || res.IsError {
		t.Fatalf("result %+v, %v", res, err)
	}
	if got := res.StructuredContent.(map[string]any)["category"]; got != "billing" {
		t.Fatalf("category %v, want billing", got)
	}
}

func TestBridgesExampleServesOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0x", "example.com:80", "[::]:0"} {
		if ln, err := listenLoopback(addr); err == nil {
			ln.Close()
			t.Errorf("listenLoopback(%q) listened on %s, want a refusal", addr, ln.Addr())
		}
	}
	for _, addr := range []string{":0", "127.0.0.1:0", "localhost:0"} {
		ln, err := listenLoopback(addr)
		if err != nil {
			t.Errorf("listenLoopback(%q): %v", addr, err)
			continue
		}
		if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
			t.Errorf("listenLoopback(%q) listened on %s", addr, ip)
		}
		ln.Close()
	}
}

func TestBridgesExampleServeSaysWhereItListensAndStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serveHTTP(ctx, "127.0.0.1:0", w); w.Close() }()
	first, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(first), "serving the help desk at ")
	if !ok {
		t.Fatalf("first line %q names no URL", first)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	resp, err := http.Get(url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		URL    string `json:"url"`
		Skills []struct {
			ID string `json:"id"`
		} `json:"skills"`
	}
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil || card.URL != url || len(card.Skills) != 2 {
		t.Errorf("card %+v (%v), want the help desk's two skills at %s", card, err, url)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve ended with %v, want nil when its context ends", err)
	}
}

func TestBridgesExampleRefusesAHostThatIsNotLoopback(t *testing.T) {
	client, stop, err := start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	h, err := handler(client, "http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	// A page on rebind.example whose name now resolves to 127.0.0.1 sends
	// its own name as Host: same-origin to the browser, foreign to us.
	for host, want := range map[string]int{"rebind.example": http.StatusForbidden, "rebind.example:8080": http.StatusForbidden,
		"localhost:8080": http.StatusOK, "127.0.0.1:8080": http.StatusOK, "[::1]:8080": http.StatusOK} {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/.well-known/agent-card.json", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %q: status %d, want %d", host, rec.Code, want)
		}
	}
}

func TestBridgesExampleRefusesALocalhostThatIsNotLoopback(t *testing.T) {
	// A hosts file may map localhost to any address: what was bound decides.
	elsewhere := func(network, addr string) (net.Listener, error) {
		_, port, _ := net.SplitHostPort(addr)
		return net.Listen(network, net.JoinHostPort("0.0.0.0", port))
	}
	if ln, err := listenLoopbackWith(elsewhere, "localhost:0"); err == nil {
		ln.Close()
		t.Fatalf("listened on %s, want a refusal", ln.Addr())
	}
}
