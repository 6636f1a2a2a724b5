package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// governedServer records decisions on a server's agent.audit: two blocks
// for payer and a defer for clerk. It returns the address, the transport
// and the records.
func governedServer(t *testing.T, opts govern.Config) (string, *iggy.Transport, []govern.Entry) {
	t.Helper()
	addr := serverAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	tr, err := iggy.Dial(ctx, addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	policy := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		if a.Agent == "clerk" {
			return govern.Defer("after close"), nil
		}
		return govern.Block("no wires").WithPolicy("payments", "v1"), nil
	})
	client := runtime.NewClient(tr, runtime.ClientConfig{EffectGate: govern.NewGate(policy, opts), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for _, from := range []string{"payer", "payer", "clerk"} {
		if _, err := client.Send(ctx, runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: from, Body: []byte("wire-funds")}); err == nil {
			t.Fatal("a governed effect ran")
		}
	}
	entries, err := govern.ReadAudit(ctx, tr, "")
	if err != nil || len(entries) != 3 {
		t.Fatalf("read %d decisions (%v), want 3", len(entries), err)
	}
	return addr, tr, entries
}

func TestAuditListsEachAgentsDecisions(t *testing.T) {
	addr, _, _ := governedServer(t, govern.Config{})
	code, out, errOut := laser(t, "audit", "--addr", addr, "--json")
	if code != exitOK {
		t.Fatalf("audit: %d %s", code, errOut)
	}
	var views []activityView
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatal(err)
	}
	if len(views) != 2 || views[0].Agent != "payer" || views[0].Decisions != 2 || views[0].ByVerdict["block"] != 2 ||
		views[0].Latest.Outcome != "blocked" || views[0].Latest.Policy != "payments v1" ||
		views[1].Agent != "clerk" || views[1].ByVerdict["defer"] != 1 {
		t.Fatalf("audit --json: %s", out)
	}
	code, out, _ = laser(t, "audit", "--addr", addr)
	if code != exitOK || !strings.Contains(out, "payer") || !strings.Contains(out, "block=2") || !strings.Contains(out, "defer=1") {
		t.Fatalf("audit: %d\n%s", code, out)
	}
}

func TestAuditVerifyPassesAnIntactChain(t *testing.T) {
	addr, _, _ := governedServer(t, govern.Config{})
	if code, out, errOut := laser(t, "audit", "verify", "--addr", addr); code != exitOK || !strings.Contains(out, "3 decision records") {
		t.Fatalf("audit verify: %d %s %s", code, out, errOut)
	}
}

// republish appends the records' envelopes to topic in the order given.
func republish(t *testing.T, tr *iggy.Transport, topic string, envs ...*wire.Envelope) {
	t.Helper()
	ctx := t.Context()
	if err := tr.EnsureTopics(ctx, 1, topic); err != nil {
		t.Fatal(err)
	}
	for _, env := range envs {
		payload, err := env.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Publish(ctx, topic, runtime.Outgoing{Headers: wire.EnvelopeHeaders(env, wire.ContentCBOR), Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAuditVerifyNamesEachTamperingWithItsPosition(t *testing.T) {
	addr, tr, entries := governedServer(t, govern.Config{})
	e := func(i int) *wire.Envelope { return entries[i].Envelope }
	altered := *entries[1].Evidence
	altered.Outcome = govern.OutcomeEffected
	body, err := altered.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	changed := *e(1)
	changed.Body = body
	cases := []struct {
		name, topic string
		envs        []*wire.Envelope
		problem     string
	}{
		{"removed", "removed.audit", []*wire.Envelope{e(0), e(2)}, "removed"},
		{"reordered", "reordered.audit", []*wire.Envelope{e(0), e(2), e(1)}, "reordered"},
		{"altered", "altered.audit", []*wire.Envelope{e(0), &changed, e(2)}, "altered"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			republish(t, tr, tc.topic, tc.envs...)
			code, out, _ := laser(t, "audit", "verify", "--addr", addr, "--topic", tc.topic, "--json")
			if code != exitFailed {
				t.Fatalf("audit verify of a %s record: exit %d, want %d\n%s", tc.name, code, exitFailed, out)
			}
			var views []findingView
			if err := json.Unmarshal([]byte(out), &views); err != nil {
				t.Fatal(err)
			}
			if len(views) == 0 || views[0].Problem != tc.problem || views[0].Index != 1 || views[0].Position != "0:1" {
				t.Fatalf("findings %+v, want %s at index 1 (position 0:1) first", views, tc.problem)
			}
		})
	}
}

func TestAuditVerifyChecksSignaturesOfTrustedPrincipals(t *testing.T) {
	key, other := sign.NewKey([32]byte{1}), sign.NewKey([32]byte{2})
	addr, _, _ := governedServer(t, govern.Config{Key: key})
	trusted := "governor=" + hex.EncodeToString(key.Public())
	if code, out, errOut := laser(t, "audit", "verify", "--addr", addr, "--trust", trusted); code != exitOK {
		t.Fatalf("audit verify of signed evidence: %d %s %s", code, out, errOut)
	}
	wrong := "governor=" + hex.EncodeToString(other.Public())
	code, out, _ := laser(t, "audit", "verify", "--addr", addr, "--trust", wrong, "--json")
	var views []findingView
	if code != exitFailed || json.Unmarshal([]byte(out), &views) != nil || len(views) != 3 || views[0].Problem != "unverified" {
		t.Fatalf("audit verify under another key: exit %d\n%s", code, out)
	}
	if code, _, _ := laser(t, "audit", "verify", "--addr", addr, "--trust", "governor=zz"); code != exitUsage {
		t.Fatalf("a malformed --trust exits %d, want %d", code, exitUsage)
	}
}

func TestAuditVerifyPinsAChainsSigner(t *testing.T) {
	key, eve := sign.NewKey([32]byte{1}), sign.NewKey([32]byte{2})
	addr, _, _ := governedServer(t, govern.Config{Key: key, Producer: "gate-1"})
	trust := []string{"--trust", "governor=" + hex.EncodeToString(key.Public()), "--trust", "eve=" + hex.EncodeToString(eve.Public())}
	if code, out, errOut := laser(t, append([]string{"audit", "verify", "--addr", addr, "--signer", "gate-1=governor"}, trust...)...); code != exitOK {
		t.Fatalf("audit verify with the right signer pinned: %d %s %s", code, out, errOut)
	}
	code, out, _ := laser(t, append([]string{"audit", "verify", "--addr", addr, "--json", "--signer", "gate-1=eve"}, trust...)...)
	var views []findingView
	if code != exitFailed || json.Unmarshal([]byte(out), &views) != nil || len(views) != 3 || views[0].Problem != "unverified" {
		t.Fatalf("audit verify with another trusted principal pinned: exit %d\n%s", code, out)
	}
}

func TestAuditVerifyReportsAChainEndingBeforeItsExpectedSeq(t *testing.T) {
	addr, _, _ := governedServer(t, govern.Config{Producer: "gate-1"})
	if code, out, errOut := laser(t, "audit", "verify", "--addr", addr, "--expect", "gate-1=3"); code != exitOK {
		t.Fatalf("audit verify of a complete chain: %d %s %s", code, out, errOut)
	}
	code, out, _ := laser(t, "audit", "verify", "--addr", addr, "--json", "--expect", "gate-1=5")
	var views []findingView
	if code != exitFailed || json.Unmarshal([]byte(out), &views) != nil || len(views) != 1 || views[0].Problem != "removed" || views[0].Index != 3 {
		t.Fatalf("audit verify expecting two more records: exit %d\n%s", code, out)
	}
	if code, _, _ := laser(t, "audit", "verify", "--addr", addr, "--expect", "gate-1=0"); code != exitUsage {
		t.Fatalf("--expect of seq 0 exits %d, want %d", code, exitUsage)
	}
}

func TestAuditEscapesWhatPeersWrote(t *testing.T) {
	addr, tr, entries := governedServer(t, govern.Config{})
	forged := *entries[0].Evidence
	forged.Producer, forged.Verdict, forged.Outcome = "gate\x1b[2J", "block\x1b[31m", "blocked\x07"
	forged.Action.Agent, forged.Action.Kind, forged.Action.Topic = "payer\x1b]0;owned\x07", "event\x1b[1m", "agent.commands\x1b[0m"
	body, err := forged.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	env := *entries[0].Envelope
	env.Body = body
	republish(t, tr, "forged.audit", &env)
	for _, args := range [][]string{{"audit", "--topic", "forged.audit"}, {"audit", "verify", "--topic", "forged.audit"}} {
		_, out, _ := laser(t, append(args, "--addr", addr)...)
		if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, "gate") && !strings.Contains(out, "payer") {
			t.Fatalf("%v printed %q, want the peer's fields escaped", args, out)
		}
	}
}

// A flood of forged decisions costs the audit page a bounded window, the
// newest records of each partition, not the whole topic.
func TestConsoleAuditReadsOnlyTheNewestWindow(t *testing.T) {
	_, tr, entries := governedServer(t, govern.Config{})
	forged := *entries[0].Envelope
	forged.Body = make([]byte, 1<<10)
	envs := make([]*wire.Envelope, scanDepth+10)
	for i := range envs {
		envs[i] = &forged
	}
	republish(t, tr, runtime.TopicAudit, envs...)
	c, err := newConsole(tr, consoleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, c)
	page := wantPage(t, srv, "/audit", http.StatusOK, `id="window"`, "laser audit verify")
	if want := fmt.Sprintf("%d decision record(s)", scanDepth); !strings.Contains(page, want) {
		t.Fatalf("the audit page does not say %q:\n%s", want, page)
	}
}

func TestConsoleAuditChecksTheChainOfAWholeTopic(t *testing.T) {
	_, tr, _ := governedServer(t, govern.Config{})
	c, err := newConsole(tr, consoleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	wantPage(t, serveHandler(t, c), "/audit", http.StatusOK, "3 decision record(s).", "every chain is complete")
}
