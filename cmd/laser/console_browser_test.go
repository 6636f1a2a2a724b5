package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// browser starts a headless Chromium for t: Debian's chromium, which .ci/run
// installs. Without one the test skips, except in CI, where it fails.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium on PATH: .ci/run installs Debian's chromium for the console's browser tests")
		}
		t.Skip("no chromium on PATH; install Debian's chromium to run the console's browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900), chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelTimeout)
	return ctx
}

// screenshot keeps a picture (PNG: quality 100) of the page as a test artifact: in
// LASER_CONSOLE_SCREENSHOTS when set (the docs' pictures come from there),
// else in the test's temporary directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("LASER_CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// clickAndLoad clicks sel and waits for the page it loads.
func clickAndLoad(ctx context.Context, sel string) error {
	_, err := chromedp.Run(ctx, chromedp.WaitEvent(cdppage.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel))))
	return err
}

func TestBrowserShowsAgentsTopicsAndAConversation(t *testing.T) {
	ctx := browser(t)
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{addr: redactAddr(s.addr)})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/agents"), chromedp.WaitVisible(chromedp.CSS(`tr.agent[data-agent="ledger"]`))); err != nil {
		t.Fatal(err)
	}
	card, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`tr.agent[data-agent="ledger"]`)))
	if err != nil || !strings.Contains(card, "1.2.0") || !strings.Contains(card, "refund") {
		t.Fatalf("the agent row shows %q (%v)", card, err)
	}
	screenshot(t, ctx, "agents")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/conversations/"+s.conv.String()), chromedp.WaitVisible(chromedp.CSS(".stream-text"))); err != nil {
		t.Fatal(err)
	}
	kinds, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#timeline table.records tr.record td:nth-child(3)")].map(td => td.innerText.split(" ")[0])`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(kinds, ",") != "command,chunk,chunk,chunk" {
		t.Fatalf("the timeline's kinds are %v, want the command then its three chunks", kinds)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".stream-text")))
	if err != nil || text != "the total is 12.50 EUR" {
		t.Fatalf("the assembled stream reads %q (%v)", text, err)
	}
	screenshot(t, ctx, "conversation")
}

func TestBrowserRedrivesADeadLetterThatIsThenHandled(t *testing.T) {
	ctx := browser(t)
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{write: true, unverified: true})
	caps, err := readCapsules(t.Context(), s.tr, runtime.TopicDLQ)
	if err != nil {
		t.Fatal(err)
	}
	var bad string
	for _, c := range caps {
		if c.Capsule != nil && string(c.Capsule.Payload) == "bad amount" {
			bad = c.Position.String()
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/dlq"), chromedp.Click(chromedp.CSS(`tr[data-capsule="`+bad+`"] input[type=checkbox]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "dlq")
	if err := clickAndLoad(ctx, "#redrive"); err != nil {
		t.Fatal(err)
	}
	if err := clickAndLoad(ctx, "#confirm"); err != nil {
		t.Fatal(err)
	}
	result, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#results")))
	if err != nil || !strings.Contains(result, "republished at") {
		t.Fatalf("the redrive page says %q (%v)", result, err)
	}
	// The agent, started again, handles the redriven copy.
	handled := make(chan string, 4)
	client := runtime.NewClient(s.tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	agent, err := client.NewAgent(runtime.AgentConfig{ID: "ledger", Listen: runtime.TopicCommands,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			handled <- string(c.Message().Body())
			return nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(t.Context())
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	for {
		select {
		case body := <-handled:
			if body == "bad amount" {
				return
			}
		case <-ctx.Done():
			t.Fatal("the redriven message was not handled")
		}
	}
}

func TestBrowserAnswersAnApproval(t *testing.T) {
	ctx := browser(t)
	addr, errs, answers := asking(t, "ship order o-42?")
	tr, err := iggy.Dial(t.Context(), addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	srv := consoleServer(t, &seeded{addr: addr, tr: tr}, consoleConfig{write: true, unverified: true})
	v := pendingCorrelation(t, addr)
	row := `tr.approval[data-correlation="` + v.Correlation + `"]`
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/approvals"), chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.SendKeys(chromedp.CSS(row+` input[name=text]`), "go ahead")); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "approvals")
	if err := clickAndLoad(ctx, row+" button.approve"); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("the asker got %v", err)
	}
	if got := <-answers; got != "go ahead" {
		t.Fatalf("the asker got %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("p.empty"))); err != nil {
		t.Fatalf("the answered request is still listed: %v", err)
	}
}

func TestBrowserTailsLiveAndPauses(t *testing.T) {
	ctx := browser(t)
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	// The tail follows new records only: once the stream is open, what is
	// sent appears and the seeded records do not.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/tail?topic="+runtime.TopicCommands)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("state").textContent === "following"`)); err != nil {
		t.Fatalf("the tail did not open: %v", err)
	}
	send := func(body string) {
		t.Helper()
		if _, err := s.client.SendPlain(t.Context(), runtime.TopicCommands, wire.Provenance{Conversation: s.client.IDs().NewID(), Agent: "shop"}, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	shows := func(text string) string {
		return `[...document.querySelectorAll("#tail pre")].some(p => p.textContent === ` + jsString(text) + `)`
	}
	send("live one")
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](shows("live one"))); err != nil {
		t.Fatalf("a new record did not appear: %v", err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#tail tr.record").length`)); err != nil || n != 1 {
		t.Fatalf("the tail drew %d records, want only the new one (%v)", n, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("pause"))); err != nil {
		t.Fatal(err)
	}
	send("while paused")
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("state").textContent === "paused, 1 new"`)); err != nil {
		t.Fatalf("the paused tail did not count the new record: %v", err)
	}
	if drawn, err := chromedp.Run(ctx, chromedp.Evaluate[bool](shows("while paused"))); err != nil || drawn {
		t.Fatalf("a paused tail drew a record (%v)", err)
	}
	screenshot(t, ctx, "tail")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("pause"))); err != nil {
		t.Fatal(err)
	}
	if drawn, err := chromedp.Run(ctx, chromedp.Evaluate[bool](shows("while paused"))); err != nil || !drawn {
		t.Fatalf("resuming did not draw what arrived meanwhile (%v)", errors.Join(err))
	}
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
