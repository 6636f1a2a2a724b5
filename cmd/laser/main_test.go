package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// laser runs one command line and returns its exit code and output.
func laser(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// poisoned parks two plain messages and one AGDX command in agent.dlq
// through a real consumer and returns the server's address: a stream of its
// own on the real server LASER_IGGY_ADDR names when it is set, else the
// in-process test server.
func poisoned(t *testing.T) (addr string, tr *iggy.Transport) {
	t.Helper()
	addr = serverAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: logger})
	if err := client.Bootstrap(ctx, 2); err != nil {
		t.Fatal(err)
	}
	parked := make(chan struct{}, 8)
	agent, err := client.NewAgent(runtime.AgentConfig{ID: "ledger", Listen: runtime.TopicCommands,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			if strings.HasPrefix(string(c.Message().Body()), "ok") {
				return nil
			}
			return runtime.Reject(fmt.Errorf("cannot book %q", c.Message().Body()))
		}),
		SigningKey: ledgerKey(),
		Tuning:     runtime.Tuning{DeadLetterSink: func(context.Context, runtime.DeadLetter) { parked <- struct{}{} }},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	conv := client.IDs().NewID()
	for _, body := range []string{"bad amount", "ok fine"} {
		if _, err := client.SendPlain(ctx, runtime.TopicCommands, wire.Provenance{Conversation: conv, Agent: "shop", IdempotencyKey: "k-" + body}, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.Send(ctx, runtime.Out{From: "shop", Target: "ledger", Body: []byte{0xff, 0x00, 0x01}}, runtime.WithOperation("book")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case <-parked:
		case <-ctx.Done():
			t.Fatal("messages were not dead-lettered")
		}
	}
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return addr, tr
}

func TestDLQListShowsReasonAttemptsSourceAndDetail(t *testing.T) {
	addr, _ := poisoned(t)
	code, out, errOut := laser(t, "dlq", "list", "--addr", addr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "CAPSULE") || strings.Count(out, "rejected") != 4 || !strings.Contains(out, `rejected: cannot book "bad amount"`) {
		t.Fatalf("list output:\n%s", out)
	}
	code, out, _ = laser(t, "dlq", "list", "--addr", addr, "--json")
	var views []capsuleView
	if code != exitOK || json.Unmarshal([]byte(out), &views) != nil || len(views) != 2 {
		t.Fatalf("json output (%d):\n%s", code, out)
	}
	for _, v := range views {
		if v.Reason != "rejected" || v.Attempts != 1 || v.Source == "" {
			t.Fatalf("view %+v", v)
		}
	}
}

func TestDLQShowDecodesTheEnvelopeAndPrintsBinaryBodiesAsHex(t *testing.T) {
	addr, _ := poisoned(t)
	_, out, _ := laser(t, "dlq", "list", "--addr", addr, "--json")
	var views []capsuleView
	if err := json.Unmarshal([]byte(out), &views); err != nil {
		t.Fatal(err)
	}
	var agdx string
	for _, v := range views {
		code, out, errOut := laser(t, "dlq", "show", "--addr", addr, "--json", v.Capsule)
		if code != exitOK {
			t.Fatalf("show %s exit %d: %s", v.Capsule, code, errOut)
		}
		var shown shownCapsule
		if err := json.Unmarshal([]byte(out), &shown); err != nil {
			t.Fatal(err)
		}
		switch shown.Payload.Shape {
		case "agdx":
			agdx = v.Capsule
			if shown.Payload.Kind != "command" || shown.Payload.Operation != "book" || shown.Payload.From != "shop" ||
				shown.Payload.BodyEncoding != "hex" || shown.Payload.Body != "ff0001" {
				t.Fatalf("agdx payload %+v", shown.Payload)
			}
		default:
			if shown.Payload.Body != "bad amount" || shown.Payload.BodyEncoding != "text" {
				t.Fatalf("plain payload %+v", shown.Payload)
			}
		}
	}
	if agdx == "" {
		t.Fatal("the AGDX command was not among the capsules")
	}
	code, out, _ := laser(t, "dlq", "show", "--addr", addr, agdx)
	if code != exitOK || !strings.Contains(out, "envelope  command book") || !strings.Contains(out, "body (hex)\nff0001") {
		t.Fatalf("show output:\n%s", out)
	}
}

func TestDLQRedriveRepublishesTheOriginalWithARekeyedIdempotencyKey(t *testing.T) {
	addr, tr := poisoned(t)
	ctx := context.Background()
	before, err := tr.NextOffset(ctx, runtime.TopicCommands, 0)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := laser(t, "dlq", "redrive", "--addr", addr, "--all", "--json", "--keys", ledgerKeys(t))
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	n := 0
	for dec.More() {
		var r redriveResult
		if err := dec.Decode(&r); err != nil || r.Error != "" || r.Republished == "" {
			t.Fatalf("result %+v %v", r, err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d results", n)
	}
	var copies []runtime.Incoming
	parts, _ := tr.Partitions(ctx, runtime.TopicCommands)
	for p := uint32(0); p < parts; p++ {
		from := uint64(0)
		if p == 0 {
			from = before
		}
		recs, err := tr.ReadRange(ctx, runtime.TopicCommands, p, from, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if v, ok := r.Headers.Get(wire.HeaderIdempotencyKey); ok && strings.Contains(string(v.Data), "/redrive/") {
				copies = append(copies, r)
			}
		}
	}
	if len(copies) != 1 || string(copies[0].Payload) != "bad amount" {
		t.Fatalf("redriven plain copies %+v", copies)
	}
	v, _ := copies[0].Headers.Get(wire.HeaderIdempotencyKey)
	if !strings.HasPrefix(string(v.Data), "k-bad amount/redrive/") {
		t.Fatalf("idempotency key %q", v.Data)
	}
}

func TestTailFollowsAndDecodesRecords(t *testing.T) {
	addr, _ := poisoned(t)
	code, out, errOut := laser(t, "tail", "--addr", addr, "--from-beginning", "-n", "3", runtime.TopicCommands)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Count(out, "agent.commands ") != 3 || !strings.Contains(out, "command book") || !strings.Contains(out, "plain  shop -> *") {
		t.Fatalf("tail output:\n%s", out)
	}
}

func TestExitCodesForUsageAndConnectionErrors(t *testing.T) {
	if code, _, _ := laser(t); code != exitUsage {
		t.Fatalf("no command: %d", code)
	}
	if code, _, _ := laser(t, "frobnicate"); code != exitUsage {
		t.Fatalf("unknown command: %d", code)
	}
	if code, out, _ := laser(t, "dlq", "list", "--help"); code != exitOK || !strings.Contains(out, "-addr") {
		t.Fatalf("help: %d %q", code, out)
	}
	t.Setenv("LASER_IGGY_ADDR", "")
	if code, _, errOut := laser(t, "dlq", "list"); code != exitUsage || !strings.Contains(errOut, "LASER_IGGY_ADDR") {
		t.Fatalf("no address: %d %s", code, errOut)
	}
	if code, _, _ := laser(t, "tail", "--addr", "http://x/y", "t"); code != exitUsage {
		t.Fatalf("bad connection string: %d", code)
	}
	// A closed loopback port: a connection error, quickly.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	if code, _, errOut := laser(t, "dlq", "list", "--timeout", "1s", "--addr", "iggy://iggy:iggy@"+closed+"/laser"); code != exitConnect {
		t.Fatalf("closed port: %d %s", code, errOut)
	}
	srv := iggytest.Start(t, iggytest.Config{})
	if code, _, errOut := laser(t, "dlq", "list", "--addr", "iggy://iggy:wrong@"+srv.Addr()+"/laser"); code != exitConnect {
		t.Fatalf("bad credentials: %d %s", code, errOut)
	}
}

func TestDevServesTheProtocolUntilInterrupted(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"dev", "--addr", addr, "--console", "127.0.0.1:0"}, &out, &errOut) }()
	dialCtx, dialCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer dialCancel()
	var tr *iggy.Transport
	for {
		tr, err = iggy.Dial(dialCtx, "iggy://iggy:iggy@"+addr+"/laser", iggy.Config{DialTimeout: 200 * time.Millisecond})
		if err == nil || dialCtx.Err() != nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.EnsureTopics(dialCtx, 1, "t"); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	// The console is served beside the server, at the address dev prints.
	console, err := out.line(dialCtx, "laser console: ")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(console + "topics")
	if err != nil {
		t.Fatalf("the console at %q: %v", console, err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "agent.commands") {
		t.Fatalf("the console's topics page (%d):\n%s", resp.StatusCode, page)
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "not a production broker") {
		t.Fatalf("dev must say it is not for production:\n%s", out.String())
	}
}

func TestDevRefusesANonLoopbackAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8090"} {
		if code, _, errOut := laser(t, "dev", "--addr", addr, "--console", "127.0.0.1:0"); code != exitUsage || !strings.Contains(errOut, "not a loopback address") {
			t.Errorf("dev --addr %s: exit %d %s", addr, code, errOut)
		}
	}
}

// The progress bar is for people: it is drawn on a terminal and nowhere
// else (a file or a pipe gets no frames).
func TestDLQRedriveDrawsProgressOnlyOnATerminal(t *testing.T) {
	addr, _ := poisoned(t)
	code, out, errOut := laser(t, "dlq", "redrive", "--addr", addr, "--all", "--keys", ledgerKeys(t))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if errOut != "" {
		t.Fatalf("stderr is not a terminal, yet it got %q", errOut)
	}
	if strings.Count(out, "republished at agent.commands ") != 2 {
		t.Fatalf("stdout:\n%s", out)
	}

	addr, _ = poisoned(t)
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, terminal: func(io.Writer) bool { return true }}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if code := a.run(ctx, []string{"dlq", "redrive", "--addr", addr, "--all", "--unverified"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "redriving") || !strings.Contains(stderr.String(), "/2)") {
		t.Fatalf("no progress bar on a terminal: %q", stderr.String())
	}
}
