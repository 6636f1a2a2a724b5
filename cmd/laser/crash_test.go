package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// crashedConversation parks one command of a fresh conversation on a test
// server and returns the address and the conversation.
func crashedConversation(t *testing.T) (string, wire.ID) {
	t.Helper()
	addr := serverAddr(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	tr, err := iggy.Dial(ctx, addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := client.Bootstrap(ctx, 1); err != nil {
		t.Fatal(err)
	}
	parked := make(chan struct{}, 1)
	agent, err := client.NewAgent(runtime.AgentConfig{ID: "billing", Listen: runtime.TopicCommands,
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error { return runtime.Reject(errors.New("card declined")) }),
		Tuning:  runtime.Tuning{DeadLetterSink: func(context.Context, runtime.DeadLetter) { parked <- struct{}{} }},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Shutdown(context.WithoutCancel(ctx)) })
	conv := client.IDs().NewID()
	cmd := runtime.Out{From: "planner", Target: "billing", Body: []byte("charge card 4242")}
	if _, err := client.Send(ctx, cmd, runtime.WithConversation(conv)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-parked:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	return addr, conv
}

func TestCrashPrintsJournalAndDeadLetter(t *testing.T) {
	addr, conv := crashedConversation(t)
	code, out, errOut := laser(t, "crash", conv.String(), "--addr", addr)
	if code != exitOK {
		t.Fatalf("crash: %d %s", code, errOut)
	}
	for _, want := range []string{"journal (1", `"charge card 4242"`, "dead letter at", "rejected", "last decision: none"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = laser(t, "crash", conv.String(), "--addr", addr, "--json")
	if code != exitOK {
		t.Fatalf("crash --json: %d %s", code, errOut)
	}
	var v crashJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Journal) != 1 || v.DeadLetter == nil || v.DeadLetter.Reason != "rejected" || v.LastDecision != nil {
		t.Errorf("crash --json: %s", out)
	}
}

func TestCrashOfAConversationThatNeverExisted(t *testing.T) {
	addr, _ := crashedConversation(t)
	never := wire.ID{0xde, 0xad}.String()
	code, _, errOut := laser(t, "crash", never, "--addr", addr)
	if code == exitOK || !strings.Contains(errOut, "no record on the log") || !strings.Contains(errOut, never) {
		t.Errorf("crash of an unknown conversation: %d %s", code, errOut)
	}
	if code, _, errOut := laser(t, "crash", "not-an-id", "--addr", addr); code != exitUsage || !strings.Contains(errOut, "not a conversation id") {
		t.Errorf("crash with a bad id: %d %s", code, errOut)
	}
}

// TestCrashVerifiesWithKeys: with --keys, the ledger's signed capsule is
// the dead letter and the unsigned journal records are left out; keys that
// do not enroll the ledger's key leave the capsule out and say so.
func TestCrashVerifiesWithKeys(t *testing.T) {
	addr, tr := poisoned(t)
	conv := parkedConversation(t, &seeded{tr: tr})
	code, out, errOut := laser(t, "crash", conv.String(), "--addr", addr, "--json", "--keys", ledgerKeys(t))
	if code != exitOK {
		t.Fatalf("crash --keys: %d %s", code, errOut)
	}
	var v crashJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if !v.Verified || v.DeadLetter == nil || v.Refused != 0 || len(v.Journal) != 0 {
		t.Fatalf("crash --keys of the ledger: %s", out)
	}
	other := filepath.Join(t.TempDir(), "keys")
	var seed [32]byte
	copy(seed[:], "somebody else")
	if err := os.WriteFile(other, []byte("ledger agent "+hex.EncodeToString(sign.NewKey(seed).Public())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = laser(t, "crash", conv.String(), "--addr", addr, "--keys", other)
	if code != exitOK || !strings.Contains(out, "dead letter: none") || !strings.Contains(errOut, "1 capsule(s) of this conversation left out") {
		t.Fatalf("crash with keys not enrolling the ledger: %d\n%s\n%s", code, out, errOut)
	}
}
