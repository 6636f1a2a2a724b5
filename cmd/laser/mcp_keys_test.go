package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

func deskKey() *sign.Key {
	var seed [32]byte
	seed[0] = 7
	return sign.NewKey(seed)
}

// deskKeys writes a keys file enrolling the desk's key.
func deskKeys(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte("desk agent "+hex.EncodeToString(deskKey().Public())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// listedTools runs laser mcp --list --json with args and returns the tool
// names and what it said on stderr.
func listedTools(t *testing.T, args ...string) (string, string) {
	t.Helper()
	code, out, errOut := laser(t, append([]string{"mcp", "--list", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tools []toolView
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name
	}
	return strings.Join(names, " "), errOut
}

func TestMCPUnderKeysSkipsAnUnsignedCardWithAWarning(t *testing.T) {
	addr, _ := deskOnRegistrySigned(t, nil)
	names, errOut := listedTools(t, "--addr", addr, "--keys", deskKeys(t))
	if names != "" {
		t.Fatalf("tools %q from an unsigned card, want none", names)
	}
	if !strings.Contains(errOut, "skipping the card of desk") {
		t.Fatalf("stderr %q, want a warning naming the desk", errOut)
	}
}

func TestMCPUnderKeysServesASignedCard(t *testing.T) {
	addr, _ := deskOnRegistrySigned(t, deskKey())
	if names, errOut := listedTools(t, "--addr", addr, "--keys", deskKeys(t)); names != "desk_quote desk_order desk_spell" {
		t.Fatalf("tools %q (stderr %q), want the desk's three skills", names, errOut)
	}
}

func TestMCPSkipsACardListingOneSkillTwiceAndServesTheOthers(t *testing.T) {
	addr, client := deskOnRegistrySigned(t, nil)
	bad := &wire.AgentCard{Name: "billing", Capabilities: []wire.CapabilityDescriptor{{SkillID: "refund"}, {SkillID: "refund"}}}
	body, err := bad.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Send(t.Context(), runtime.Out{Kind: wire.KindStatus, From: "billing", Body: body}, runtime.WithOperation(wire.OperationCard)); err != nil {
		t.Fatal(err)
	}
	names, errOut := listedTools(t, "--addr", addr)
	if names != "desk_quote desk_order desk_spell" {
		t.Fatalf("tools %q, want the desk's three skills", names)
	}
	if !strings.Contains(errOut, "skipping the card of billing") || !strings.Contains(errOut, `"refund" twice`) {
		t.Fatalf("stderr %q, want a warning naming billing's repeated skill", errOut)
	}
}

func TestMCPCallsAnAgentOnItsOwnTopicWithoutFlags(t *testing.T) {
	addr, _ := deskOnRegistrySigned(t, nil)
	code, out, errOut := laser(t, "mcp", "--list", "--json", "--addr", addr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var tools []toolView
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) == 0 || tools[0].Topic != "desk.commands" || tools[0].ReplyTopic != "agent.responses" {
		t.Fatalf("tools %+v, want the desk called on desk.commands and answered on agent.responses", tools)
	}
}

func TestMCPWarnsOfAnAgentWhoseTopicCannotBeRead(t *testing.T) {
	addr, _ := deskOnRegistrySigned(t, nil)
	_, errOut := listedTools(t, "--addr", addr, "--listen", "desk=nowhere.commands")
	if !strings.Contains(errOut, "agent desk: its topic nowhere.commands cannot be read") {
		t.Fatalf("stderr %q, want a warning naming the desk's missing topic", errOut)
	}
}

// serveMCP runs laser mcp --http with args until the test ends and returns
// its endpoint.
func serveMCP(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...), io.Discard, pw)
		_ = pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("laser mcp exited %d", code)
		}
	})
	// Warnings may come first; the line saying where it serves ends them.
	br := bufio.NewReader(pr)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("laser mcp said no address: %v", err)
		}
		if _, url, ok := strings.Cut(strings.TrimSpace(line), " tools on "); ok {
			go func() { _, _ = io.Copy(io.Discard, br) }()
			return url
		}
	}
}

func TestMCPWithAKeySignsItsCalls(t *testing.T) {
	addr, client := deskOnRegistrySigned(t, nil)
	gateway := deskKey()
	seed := filepath.Join(t.TempDir(), "seed")
	var raw [32]byte
	raw[0] = 7 // deskKey's seed: any enrolled key will do
	if err := os.WriteFile(seed, []byte(hex.EncodeToString(raw[:])), 0o600); err != nil {
		t.Fatal(err)
	}
	url := serveMCP(t, "--addr", addr, "--key", seed)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "desk_quote", Arguments: map[string]any{"sku": "pen", "qty": 2}})
	if err != nil || res.IsError {
		t.Fatalf("result %+v, %v", res, err)
	}
	conv, err := wire.ParseID(res.Meta["laser/conversation"].(string))
	if err != nil {
		t.Fatal(err)
	}
	h, err := conversation.Assemble(t.Context(), client.Transport(), conv, conversation.Options{Topics: []string{desk.DeskListenTopic}})
	if err != nil || len(h) != 1 {
		t.Fatalf("%d calls on the desk's topic, %v", len(h), err)
	}
	reg := sign.NewRegistry()
	if err := reg.Enroll("gateway", gateway.Public()); err != nil {
		t.Fatal(err)
	}
	if err := reg.AllowSource("gateway", "mcp-gateway"); err != nil {
		t.Fatal(err)
	}
	if v, err := h[0].Verify(reg); err != nil || v.Principal != "gateway" {
		t.Fatalf("the call does not verify as the gateway's: %+v, %v", v, err)
	}
}

func TestMCPUnderKeysWithoutAKeyWarnsThatCallsGoUnsigned(t *testing.T) {
	addr, _ := deskOnRegistrySigned(t, deskKey())
	_, errOut := listedTools(t, "--addr", addr, "--keys", deskKeys(t))
	if !strings.Contains(errOut, "--keys without --key: calls to desk go unsigned") {
		t.Fatalf("stderr %q, want a warning that calls to the desk go unsigned", errOut)
	}
}

func TestMCPUnderKeysWithAKeyDoesNotWarn(t *testing.T) {
	addr, _ := deskOnRegistrySigned(t, deskKey())
	_, errOut := listedTools(t, "--addr", addr, "--keys", deskKeys(t), "--key", seedFile(t))
	if strings.Contains(errOut, "unsigned") {
		t.Fatalf("stderr %q, want no warning when calls are signed", errOut)
	}
}

// seedFile writes deskKey's seed as --key reads it.
func seedFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seed")
	var raw [32]byte
	raw[0] = 7
	if err := os.WriteFile(path, []byte(hex.EncodeToString(raw[:])), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMCPCallAVerifyingAgentRefusedUnsignedSaysWhy(t *testing.T) {
	// A desk that signs and verifies what it handles; its keys enroll
	// nobody for mcp-gateway, and laser mcp has no --key anyway.
	verifying := sign.NewRegistry()
	if err := verifying.Enroll("desk", deskKey().Public()); err != nil {
		t.Fatal(err)
	}
	addr, _ := deskServed(t, deskKey(), func(client *runtime.Client) {
		desk.StartSigned(t, client, &desk.Desk{}, deskKey(), verifying)
	})
	url := serveMCP(t, "--addr", addr, "--keys", deskKeys(t))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "desk_quote", Arguments: map[string]any{"sku": "pen", "qty": 2},
		Meta: mcp.Meta{"laser/deadline": time.Now().Add(3 * time.Second).Format(time.RFC3339Nano)}}
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, "agent desk dead-lettered the call (rejected: signature verification failed)") || !strings.Contains(text, "--key") {
		t.Fatalf("result %q, want the desk's refusal and the --key advice", text)
	}
}
