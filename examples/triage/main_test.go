package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
)

// checkOutcome asserts what the example promises: every ticket audited,
// each refund applied exactly once despite a duplicate delivery, one retry,
// and the malformed ticket parked as rejected.
func checkOutcome(t *testing.T, f Figures, out string) {
	t.Helper()
	if f.Audits != len(tickets) {
		t.Errorf("%d audit records, want %d", f.Audits, len(tickets))
	}
	want := map[string]int64{"T-1": 1999, "T-2": 500, "T-4": 1999}
	if len(f.Refunds) != len(want) {
		t.Errorf("refunds %v, want %v", f.Refunds, want)
	}
	for id, cents := range want {
		if f.Refunds[id] != cents {
			t.Errorf("refund %s = %d, want %d", id, f.Refunds[id], cents)
		}
	}
	if f.Sent != 4 || f.Applied != 3 {
		t.Errorf("%d resolve commands sent, %d applied; want 4 and 3 (the duplicate dropped)", f.Sent, f.Applied)
	}
	if f.Retries != 1 {
		t.Errorf("%d retries, want 1", f.Retries)
	}
	if len(f.DeadLetters) != 1 || !strings.HasPrefix(f.DeadLetters[0], `rejected: operation "submit": decode json body`) {
		t.Errorf("dead letters %q", f.DeadLetters)
	}
	for _, line := range []string{"resolver    T-2: payment gateway busy, will retry", "summary", "dead letters        1"} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
}

func TestTriageOnTheEmbeddedLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	f, err := run(ctx, embedlog.New("triage", embedlog.Config{}), &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	checkOutcome(t, f, out.String())
}

func TestTriageOverTheIggyProtocol(t *testing.T) {
	srv := iggytest.Start(t, iggytest.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, "iggy://iggy:iggy@"+srv.Addr()+"/triage", iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var out bytes.Buffer
	var transport runtime.Transport = tr
	f, err := run(ctx, transport, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	checkOutcome(t, f, out.String())
}
