package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
)

// tourStep4RE finds the README tour's step 4 block: the shell block that
// starts the development server.
var tourStep4RE = regexp.MustCompile("(?s)```sh\n(laser dev &.*?)```\n")

// tourRedriveRE finds the command of the tour's step 5.
var tourRedriveRE = regexp.MustCompile("\\*\\*5\\. Redrive it\\*\\*(?s:.*?)`(laser dlq redrive [^`]+)`")

// TestReadmeTourCommandsWorkOnTheDevServer runs the README tour's laser
// commands (steps 4 and 5) exactly as written against `laser dev`, after
// parking the dead letter the tour's program parks (cmd/lasergen's
// TestReadmeTourInOwnModule runs the program itself): every command must
// succeed, and dlq list must then mark the capsule redriven.
func TestReadmeTourCommandsWorkOnTheDevServer(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := tourStep4RE.FindSubmatch(readme)
	redrive := tourRedriveRE.FindSubmatch(readme)
	if block == nil || redrive == nil {
		t.Fatal("README.md has no tour step 4 block starting with `laser dev &`, or no step 5 `laser dlq redrive` command")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	devAddr, _ := startDev(t, ctx)

	var commands [][]string
	for _, line := range strings.Split(string(block[1]), "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0 || strings.Join(fields, " ") == "laser dev &":
		case fields[0] == "export":
			name, value, _ := strings.Cut(fields[1], "=")
			if name != "LASER_IGGY_ADDR" {
				t.Fatalf("the tour exports %s, not LASER_IGGY_ADDR", name)
			}
			// The tour's server listens on its default port; this one on
			// a free port.
			value = regexp.MustCompile(`@[^/]+/`).ReplaceAllString(value, "@"+devAddr+"/")
			t.Setenv(name, value)
			parkTheToursDeadLetter(t, ctx, value)
		case strings.Join(fields, " ") == "go run .":
		case fields[0] == "laser":
			commands = append(commands, fields[1:])
		default:
			t.Fatalf("the tour's step 4 runs %q, which this test does not know", line)
		}
	}
	commands = append(commands, strings.Fields(string(redrive[1]))[1:])
	for _, args := range commands {
		code, out, errOut := laser(t, args...)
		if code != exitOK {
			t.Fatalf("laser %s, as the README says: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	capsule := strings.Fields(string(redrive[1]))[3]
	code, out, errOut := laser(t, "dlq", "list", "--json")
	var views []capsuleView
	if code != exitOK || json.Unmarshal([]byte(out), &views) != nil {
		t.Fatalf("dlq list --json: exit %d\n%s%s", code, out, errOut)
	}
	// The agent still rejects the refund, so the redriven record may be
	// parked again beside it.
	i := slices.IndexFunc(views, func(v capsuleView) bool { return v.Capsule == capsule })
	if i < 0 || !strings.HasPrefix(views[i].Redriven, "billing.commands") {
		t.Fatalf("after the tour's redrive, dlq list shows %+v; want capsule %s redriven to billing.commands", views, capsule)
	}
}

// startDev runs `laser dev` on free ports until the test ends and returns
// its address and its console's URL.
func startDev(t *testing.T, ctx context.Context) (string, string) {
	t.Helper()
	devCtx, stop := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(devCtx, []string{"dev", "--addr", "127.0.0.1:0", "--console", "127.0.0.1:0"}, &out, &errOut)
	}()
	t.Cleanup(func() {
		stop()
		if code := <-done; code != exitOK {
			t.Errorf("laser dev: exit %d: %s", code, errOut.String())
		}
	})
	line, err := out.line(ctx, "laser dev: an in-memory Iggy-protocol server for development is listening on ")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	console, err := out.line(ctx, "laser console: ")
	if err != nil {
		t.Fatal(err)
	}
	return line, console
}

// parkTheToursDeadLetter does what the tour's program does to park a dead
// letter: in stream shop, with billing's topics of four partitions, the
// refund of a charge that does not exist, in the conversation of card 4242,
// is rejected by billing.
func parkTheToursDeadLetter(t *testing.T, ctx context.Context, addr string) {
	t.Helper()
	tr, err := iggy.Dial(ctx, addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(ctx, 4, "billing.commands", "billing.responses"); err != nil {
		t.Fatal(err)
	}
	parked := make(chan struct{}, 1)
	agent, err := client.NewAgent(runtime.AgentConfig{ID: "billing", Listen: "billing.commands",
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			return runtime.Reject(fmt.Errorf("no charge %q", c.Message().Body()))
		}),
		Tuning: runtime.Tuning{DeadLetterSink: func(context.Context, runtime.DeadLetter) { parked <- struct{}{} }},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Send(ctx, runtime.Out{Topic: "billing.commands", From: "shop", Target: "billing", Body: []byte("ch-7")},
		runtime.WithConversation(conversation.Derive("card-4242"))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-parked:
	case <-ctx.Done():
		t.Fatal("the refund was never parked")
	}
}
