package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// hostile is text a peer that can append to a topic chooses: it retitles the
// window, erases the line, writes the clipboard and reverses the rest.
const hostile = "\x1b]0;pwned\x07\x1b[2K\r\x1b]52;c;aGk=\x07\u009b2J\u202eok\x7f"

// hostileText is what passes for printable text with no C0 control in it:
// a C1 CSI, a right-to-left override and DEL.
const hostileText = "body \u009b2J\u202eok\x7f"

// TestHumanOutputEscapesWhatPeersWrote parks a command whose operation,
// idempotency key, body and rejection are hostile, and checks that tail,
// dlq list and dlq show print none of it raw.
func TestHumanOutputEscapesWhatPeersWrote(t *testing.T) {
	addr := serverAddr(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
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
	agent, err := client.NewAgent(runtime.AgentConfig{ID: "ledger", Listen: runtime.TopicCommands,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error { return runtime.Reject(fmt.Errorf("%s", hostile)) }),
		Tuning:  runtime.Tuning{DeadLetterSink: func(context.Context, runtime.DeadLetter) { parked <- struct{}{} }},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SendPlain(ctx, runtime.TopicCommands, wire.Provenance{Conversation: client.IDs().NewID(), Agent: "shop"}, []byte(hostileText)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-parked:
	case <-ctx.Done():
		t.Fatal("the hostile command was not dead-lettered")
	}
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := laser(t, "tail", runtime.TopicCommands, "--addr", addr, "--from-beginning", "--count", "1")
	if code != exitOK {
		t.Fatalf("tail: exit %d: %s", code, errOut)
	}
	controlFree(t, "tail", out)
	code, out, errOut = laser(t, "dlq", "list", "--addr", addr)
	if code != exitOK {
		t.Fatalf("dlq list: exit %d: %s", code, errOut)
	}
	controlFree(t, "dlq list", out)
	code, out, errOut = laser(t, "dlq", "show", "0:0", "--addr", addr)
	if code != exitOK {
		t.Fatalf("dlq show: exit %d: %s", code, errOut)
	}
	controlFree(t, "dlq show", out)
}
