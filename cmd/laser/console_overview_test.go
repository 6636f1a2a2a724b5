package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/runtime"
)

// askOn publishes a request for human input through s's client that waits
// until the test ends, and waits until it is pending.
func askOn(t *testing.T, s *seeded, prompt string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		_, _ = humaninput.Ask(ctx, s.client, humaninput.Request{From: "planner", Prompt: []byte(prompt), Timeout: time.Hour})
	}()
	waitCtx, stop := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop()
	waitPending(t, waitCtx, s.tr)
}

func TestConsoleOverviewCountsWhatNeedsAttention(t *testing.T) {
	s := seed(t)
	if err := s.client.Bootstrap(t.Context(), 1, runtime.TopicHumanInput); err != nil {
		t.Fatal(err)
	}
	askOn(t, s, "ship the release?")
	srv := consoleServer(t, s, consoleConfig{})
	page := wantPage(t, srv, "/", http.StatusOK,
		`<a class="bad" href="/dlq"><b>2</b> dead letter(s)</a>`, `<span class="tag">rejected 2</span>`,
		`<a class="bad" href="/approvals"><b>1</b> pending approval(s)</a>`, "ship the release?", "0s ago", "left)",
		`group(s) behind`, `data-group="ledger"`, `<a href="/topics/agent.commands">agent.commands</a>: 1 behind`,
		`data-agent="shop"`, "no card", `id="write-hint"`)
	if !strings.Contains(page, `data-agent="ledger"`) || !strings.Contains(page, "ledger 1.2.0") {
		t.Fatalf("the overview does not show the ledger's card:\n%s", page)
	}
}

func TestConsoleOverviewLeavesRedrivenDeadLettersOut(t *testing.T) {
	s := seed(t)
	if code, _, errOut := laser(t, "dlq", "redrive", "--addr", s.addr, "--all", "--unverified"); code != exitOK {
		t.Fatalf("redrive: exit %d: %s", code, errOut)
	}
	srv := consoleServer(t, s, consoleConfig{write: true})
	page := wantPage(t, srv, "/", http.StatusOK, `no dead letters</a> waiting`, "(2 redriven)")
	if strings.Contains(page, `id="write-hint"`) {
		t.Fatal("a console that writes hints at --write")
	}
}
