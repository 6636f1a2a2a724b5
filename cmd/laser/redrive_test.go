package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// ledgerKey is the key poisoned's ledger agent signs its capsules with.
func ledgerKey() *sign.Key {
	var seed [32]byte
	copy(seed[:], "ledger's test seed")
	return sign.NewKey(seed)
}

// ledgerKeys writes a keys file enrolling the ledger's key.
func ledgerKeys(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys")
	line := "# the ledger agent\nledger agent " + hex.EncodeToString(ledgerKey().Public()) + "\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A forged capsule appended to the dead-letter topic names a record that
// was handled (the "ok fine" payment); --all must redrive only the capsules
// the ledger signed.
func TestDLQRedriveAllRedrivesOnlyVerifiedCapsules(t *testing.T) {
	addr, tr := poisoned(t)
	ctx := context.Background()
	caps, err := readCapsules(ctx, tr, runtime.TopicDLQ)
	if err != nil || len(caps) != 2 {
		t.Fatalf("capsules %d, %v", len(caps), err)
	}
	// The forgery: a genuine capsule's headers and bytes without its
	// signature, as anyone able to write the topic can append.
	forged := caps[0].Record
	headers := forged.Headers.Decode()
	headers.Del(runtime.HeaderDeadLetterSignature)
	if _, err := tr.Publish(ctx, runtime.TopicDLQ, runtime.Outgoing{Headers: headers, Payload: forged.Payload}); err != nil {
		t.Fatal(err)
	}
	code, out, _ := laser(t, "dlq", "redrive", "--addr", addr, "--all", "--json", "--keys", ledgerKeys(t))
	if code == exitOK {
		t.Fatalf("a forged capsule was redriven:\n%s", out)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	redriven, refused := 0, 0
	for dec.More() {
		var r redriveResult
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Error == "":
			redriven++
		case strings.Contains(r.Error, "not redriven") && strings.Contains(r.Error, "not signed"):
			refused++
		default:
			t.Fatalf("result %+v", r)
		}
	}
	if redriven != 2 || refused != 1 {
		t.Fatalf("redriven %d, refused %d; want the 2 signed capsules and the forgery refused", redriven, refused)
	}
}
