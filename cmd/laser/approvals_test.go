package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// asking starts a test server and an agent asking a human prompt; it
// returns the address and a channel with Ask's outcome.
func asking(t *testing.T, prompt string) (string, chan error, chan string) {
	t.Helper()
	srv := iggytest.Start(t, iggytest.Config{})
	addr := "iggy://iggy:iggy@" + srv.Addr() + "/laser"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	tr, err := iggy.Dial(ctx, addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(ctx, 1); err != nil {
		t.Fatal(err)
	}
	errs, answers := make(chan error, 1), make(chan string, 1)
	go func() {
		got, err := humaninput.Ask(ctx, client, humaninput.Request{From: "planner", Prompt: []byte(prompt), Timeout: 15 * time.Second})
		answers <- string(got)
		errs <- err
	}()
	return addr, errs, answers
}

// pendingCorrelation waits until `laser approvals --json` lists one request.
func pendingCorrelation(t *testing.T, addr string) approvalView {
	t.Helper()
	for range 200 {
		code, out, errOut := laser(t, "approvals", "--addr", addr, "--json")
		if code != exitOK {
			t.Fatalf("approvals: %d %s", code, errOut)
		}
		var views []approvalView
		if err := json.Unmarshal([]byte(out), &views); err != nil {
			t.Fatal(err)
		}
		if len(views) == 1 {
			return views[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the request never showed as pending")
	return approvalView{}
}

func TestApprovalsListsAPendingRequestAndApprovesIt(t *testing.T) {
	addr, errs, answers := asking(t, "publish the draft?")
	v := pendingCorrelation(t, addr)
	if v.From != "planner" || v.Prompt != "publish the draft?" {
		t.Fatalf("pending request %+v", v)
	}
	if code, out, _ := laser(t, "approvals", "list", "--addr", addr); code != exitOK || !strings.Contains(out, v.Correlation) || !strings.Contains(out, "publish the draft?") {
		t.Fatalf("approvals list: %d\n%s", code, out)
	}
	code, out, errOut := laser(t, "approvals", "answer", "--addr", addr, "--as", "alice", v.Correlation, "approve", "ship it")
	if code != exitOK || !strings.Contains(out, "approved "+v.Correlation) {
		t.Fatalf("approvals answer: %d %s %s", code, out, errOut)
	}
	if got := <-answers; got != "ship it" {
		t.Fatalf("the asker got %q", got)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if _, out, _ := laser(t, "approvals", "--addr", addr); !strings.Contains(out, "no pending requests") {
		t.Fatalf("after the answer the list shows:\n%s", out)
	}
}

func TestApprovalsRefusesARequest(t *testing.T) {
	addr, errs, _ := asking(t, "delete production?")
	v := pendingCorrelation(t, addr)
	if code, _, errOut := laser(t, "approvals", "answer", "--addr", addr, v.Correlation, "refuse", "no way"); code != exitOK {
		t.Fatalf("approvals answer refuse: %d %s", code, errOut)
	}
	var refused *humaninput.RefusedError
	if err := <-errs; !errors.As(err, &refused) || refused.Reason != "no way" {
		t.Fatalf("the asker got %v, want a refusal 'no way'", err)
	}
}

func TestApprovalsAnswerNeedsAPendingCorrelation(t *testing.T) {
	addr, _, _ := asking(t, "x")
	if code, _, _ := laser(t, "approvals", "answer", "--addr", addr, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "approve"); code != exitFailed {
		t.Fatalf("answering an unknown correlation exited %d, want %d", code, exitFailed)
	}
	if code, _, _ := laser(t, "approvals", "answer", "--addr", addr, "c", "maybe"); code != exitUsage {
		t.Fatalf("a bad verdict exited %d, want %d", code, exitUsage)
	}
}

// TestApprovalsAnswerRefusesACorrelationTwoRequestsShare forges a second
// request with the real one's correlation and a benign prompt: answering by
// correlation would approve whichever request the asker waits on, so the
// command must refuse and show both prompts.
func TestApprovalsAnswerRefusesACorrelationTwoRequestsShare(t *testing.T) {
	addr, errs, _ := asking(t, "delete production?")
	v := pendingCorrelation(t, addr)
	ctx := t.Context()
	tr, err := iggy.Dial(ctx, addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	pending, err := humaninput.Pending(ctx, tr, runtime.TopicHumanInput)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending = %d, %v", len(pending), err)
	}
	forged := *pending[0].Envelope
	forged.Record, forged.Body = nil, []byte("rotate the staging log?")
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := rawsend.Envelope(ctx, client, runtime.TopicHumanInput, &forged, wire.ContentRaw); err != nil {
		t.Fatal(err)
	}
	code, out, _ := laser(t, "approvals", "--addr", addr)
	if code != exitOK || !strings.Contains(out, v.Correlation) || !strings.Contains(out, "DUPLICATE") {
		t.Fatalf("approvals list (exit %d) does not mark the shared correlation:\n%s", code, out)
	}
	code, _, errOut := laser(t, "approvals", "answer", "--addr", addr, v.Correlation, "approve")
	if code != exitFailed || !strings.Contains(errOut, "share correlation") || !strings.Contains(errOut, "delete production?") {
		t.Fatalf("answering a shared correlation exited %d (want %d) with:\n%s", code, exitFailed, errOut)
	}
	select {
	case err := <-errs:
		t.Fatalf("the asker was answered (%v) although the command refused", err)
	default:
	}
}
