package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// text is the visible text of sel, once it is visible.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		t.Fatalf("%s is not shown: %v", sel, err)
	}
	got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return got
}

func TestBrowserOverviewCountsWhatNeedsAttention(t *testing.T) {
	ctx := browser(t)
	s := seed(t)
	if err := s.client.Bootstrap(t.Context(), 1, runtime.TopicHumanInput); err != nil {
		t.Fatal(err)
	}
	askOn(t, s, "ship the release?")
	srv := consoleServer(t, s, consoleConfig{addr: redactAddr(s.addr)})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#count-dlq"); !strings.Contains(got, "2 dead letter(s) waiting for a redrive") || !strings.Contains(got, "rejected 2") {
		t.Fatalf("the dead-letter count reads %q", got)
	}
	if got := text(t, ctx, "#count-approvals"); !strings.Contains(got, "1 pending approval(s)") || !strings.Contains(got, "ship the release?") || !strings.Contains(got, "left)") {
		t.Fatalf("the approvals count reads %q", got)
	}
	if got := text(t, ctx, "#count-lag"); !strings.Contains(got, "ledger on agent.commands: 1 behind") {
		t.Fatalf("the lag reads %q", got)
	}
	if got := text(t, ctx, `tr.agent[data-agent="shop"] td.card`); got != "no card" {
		t.Fatalf("the agent seen only from traffic shows card %q", got)
	}
	if got := text(t, ctx, "#write-hint"); !strings.Contains(got, "--write") {
		t.Fatalf("the read-only hint reads %q", got)
	}
	screenshot(t, ctx, "overview")
	// The count links to the page it counts.
	if err := clickAndLoad(ctx, "#count-dlq a"); err != nil {
		t.Fatal(err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("tr.capsule").length`)); err != nil || n != 2 {
		t.Fatalf("the dead letters page lists %d capsules (%v), want 2", n, err)
	}
}

func TestBrowserShowsAWorkflowRunWithItsStatusAndDecodedOutput(t *testing.T) {
	ctx := browser(t)
	s := seed(t)
	done, undone := runWorkflows(t, s)
	srv := consoleServer(t, s, consoleConfig{})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/workflows")); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, `tr.run-row[data-run="`+done+`"] .status`); got != "completed" {
		t.Fatalf("the completed run's status reads %q", got)
	}
	if got := text(t, ctx, `tr.run-row[data-run="`+undone+`"] .status`); got != "compensated" {
		t.Fatalf("the failed run's status reads %q", got)
	}
	output := text(t, ctx, `section.run[data-run="`+done+`"] li.step[data-step="price"] pre.output`)
	if output != "{\n  \"currency\": \"EUR\",\n  \"total\": 12.5\n}" && output != "{\n  \"total\": 12.5,\n  \"currency\": \"EUR\"\n}" {
		t.Fatalf("the step's output reads %q, want its JSON decoded", output)
	}
	if got := text(t, ctx, `section.run[data-run="`+done+`"] li.step[data-step="write"] pre.output`); got != "quoted: o-42" {
		t.Fatalf("the text step's output reads %q", got)
	}
	screenshot(t, ctx, "workflows")
	// The journal bytes are one click away.
	sel := `section.run[data-run="` + done + `"] li.step[data-step="price"] details`
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel+" summary")), chromedp.WaitVisible(chromedp.CSS(sel+" pre.hex"))); err != nil {
		t.Fatalf("the journal bytes do not open: %v", err)
	}
}

func TestBrowserAssemblesAJSONStreamShowingARedeliveredChunkOnce(t *testing.T) {
	ctx := browser(t)
	s := seed(t)
	conv, channel, corr := s.client.IDs().NewID(), s.client.IDs().NewID(), s.client.IDs().NewID()
	source, _ := wire.ParseAgentID("writer")
	for i, body := range []string{`"Dear "`, `"customer,"`, `"customer,"`, `" thanks."`} {
		seq := uint64(i)
		if i >= 2 {
			seq = uint64(i - 1) // chunk 1 delivered twice
		}
		env := &wire.Envelope{Kind: wire.KindChunk, Conversation: conv, Source: source, Correlation: &corr, Channel: &channel, Sequence: &seq, Last: i == 3, Body: []byte(body)}
		if i == 0 {
			purpose := wire.OperationChat
			env.Operation = &purpose
		}
		if _, err := rawsend.Envelope(t.Context(), s.client, runtime.TopicResponses, env, wire.ContentJSON); err != nil {
			t.Fatal(err)
		}
	}
	srv := consoleServer(t, s, consoleConfig{})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/conversations/"+conv.String())); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, ".stream-text"); got != "Dear customer, thanks." {
		t.Fatalf("the JSON stream reads %q", got)
	}
	if got := text(t, ctx, ".stream h3"); !strings.Contains(got, "3 json chunk(s)") || !strings.Contains(got, "1 redelivered, shown once") {
		t.Fatalf("the stream's heading reads %q", got)
	}
}

func TestBrowserShowsAnApprovalAnUnsignedAnswerHides(t *testing.T) {
	ctx := browser(t)
	h := hideAnApproval(t)
	c, err := newConsole(h.tr, consoleConfig{keys: h.keys})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, c)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/approvals")); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, `tr.approval[data-correlation="`+h.correlation+`"]`); !strings.Contains(got, "wire 1M EUR?") {
		t.Fatalf("the hidden request's row reads %q", got)
	}
	if got := text(t, ctx, "#refused"); got != "1 answer(s) did not count" {
		t.Fatalf("the refused answers read %q", got)
	}
	h.stillWaiting(t)
}
