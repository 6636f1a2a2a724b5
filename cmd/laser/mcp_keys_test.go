package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if err := client.PublishStatus(t.Context(), "", "billing", wire.OperationCard, body, nil); err != nil {
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
