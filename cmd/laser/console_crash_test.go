package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// parkedConversation returns the conversation of the seeded "bad amount"
// command, which the ledger rejected (its capsule signed by the ledger's
// key), after a gate blocked a payment in it, so the log holds its journal,
// its dead letter and a decision about it.
func parkedConversation(t *testing.T, s *seeded) wire.ID {
	t.Helper()
	ctx := t.Context()
	caps, err := readCapsules(ctx, s.tr, runtime.TopicDLQ)
	if err != nil {
		t.Fatal(err)
	}
	var conv wire.ID
	for _, c := range caps {
		if c.Capsule != nil && string(c.Capsule.Payload) == "bad amount" {
			prov, err := wire.DecodeProvenance(c.Record.Headers)
			if err != nil {
				t.Fatal(err)
			}
			conv = prov.Conversation
		}
	}
	if conv.IsZero() {
		t.Fatal("no capsule of the bad amount")
	}
	block(t, s.tr, conv)
	return conv
}

// block has a gate block a payment in conv, which records the decision.
func block(t *testing.T, tr *iggy.Transport, conv wire.ID) {
	t.Helper()
	gate := govern.NewGate(govern.GovernorFunc(func(context.Context, *govern.Action) (govern.Decision, error) {
		return govern.Block("payments are frozen"), nil
	}), govern.Config{})
	client := runtime.NewClient(tr, runtime.ClientConfig{EffectGate: gate, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(t.Context(), 2, "payments"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SendPlain(t.Context(), "payments", wire.Provenance{Conversation: conv, Agent: "shop"}, []byte("pay 12.50 EUR")); err == nil {
		t.Fatal("the gate let the payment through")
	}
}

// parkOn has an agent on topic reject body, sent in a fresh conversation,
// with an error quoting it, and returns the conversation.
func parkOn(t *testing.T, tr *iggy.Transport, topic, body string) wire.ID {
	t.Helper()
	ctx := t.Context()
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(ctx, 1, topic); err != nil {
		t.Fatal(err)
	}
	parked := make(chan struct{}, 1)
	agent, err := client.NewAgent(runtime.AgentConfig{ID: "clerk", Listen: topic,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			return runtime.Reject(fmt.Errorf("refused %s", c.Message().Body()))
		}),
		Tuning: runtime.Tuning{DeadLetterSink: func(context.Context, runtime.DeadLetter) { parked <- struct{}{} }},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Shutdown(ctx) }()
	conv := client.IDs().NewID()
	if _, err := client.SendPlain(ctx, topic, wire.Provenance{Conversation: conv, Agent: "shop"}, []byte(body)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-parked:
	case <-ctx.Done():
		t.Fatal("the message was not dead-lettered")
	}
	return conv
}

func TestConsoleShowsTheCrashContextOfACrashedConversation(t *testing.T) {
	s := seed(t)
	conv := parkedConversation(t, s)
	srv := consoleServer(t, s, consoleConfig{})
	body := wantPage(t, srv, "/conversations/"+conv.String(), http.StatusOK,
		`id="crash"`, `id="crash-dead-letter"`, `<td id="crash-reason">rejected</td>`,
		`cannot book &#34;bad amount&#34;`, // the capsule's detail, escaped
		`id="crash-parked"`, `id="crash-decision"`, "payments are frozen", "Signatures not checked")
	parked := body[strings.Index(body, `id="crash-parked"`):]
	if parked = parked[:strings.Index(parked, "</div>")]; !strings.Contains(parked, "bad amount") || !strings.Contains(parked, "shop") || strings.Contains(parked, "undecodable") {
		t.Fatalf("the parked message is not shown with its provenance:\n%s", parked)
	}
	crash := body[strings.Index(body, `id="crash"`):]
	journal := crash[strings.Index(crash, `id="crash-journal"`):]
	if strings.Count(journal, `class="record"`) != 2 || !strings.Contains(journal, "bad amount") || !strings.Contains(journal, "ok fine") {
		t.Fatalf("the journal tail does not show the conversation's two commands:\n%s", journal)
	}
	// A conversation that never crashed says so.
	wantPage(t, srv, "/conversations/"+s.conv.String(), http.StatusOK, `id="crash-no-dead-letter"`, "No governance decision")
}

func TestConsoleCrashContextOfAConversationThatNeverExisted(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	never := s.client.IDs().NewID()
	body := wantPage(t, srv, "/conversations/"+never.String(), http.StatusNotFound, `id="error-message"`, never.String(), "no journal record, dead letter or decision")
	if strings.Contains(body, `id="crash"`) {
		t.Fatalf("a conversation that never existed got a crash section:\n%s", body)
	}
}

// TestConsoleCrashContextEscapesWhatPeersWrote: a body and a rejection a
// peer chose render as text in the crash section, never as markup.
func TestConsoleCrashContextEscapesWhatPeersWrote(t *testing.T) {
	s := seed(t)
	const evil = `<script>alert("crash")</script><img src=x onerror=alert(1)>`
	conv := parkOn(t, s.tr, "desk", evil)
	srv := consoleServer(t, s, consoleConfig{})
	body := wantPage(t, srv, "/conversations/"+conv.String(), http.StatusOK, `id="crash-dead-letter"`,
		`refused &lt;script&gt;alert(&#34;crash&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;`)
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
		t.Fatalf("the crash section rendered a peer's markup:\n%s", body)
	}
}

// TestConsoleCrashContextVerifiesWithTheConsolesKeys: with --keys the
// section shows the capsule the ledger signed and says signatures were
// checked; keys that do not enroll the ledger leave its capsule out and
// count it, and the unsigned journal records are not shown.
func TestConsoleCrashContextVerifiesWithTheConsolesKeys(t *testing.T) {
	s := seed(t)
	conv := parkedConversation(t, s)
	ledger := sign.NewRegistry()
	if err := ledger.Enroll("ledger", ledgerKey().Public()); err != nil {
		t.Fatal(err)
	}
	var seed [32]byte
	copy(seed[:], "somebody else")
	other := sign.NewRegistry()
	if err := other.Enroll("ledger", sign.NewKey(seed).Public()); err != nil {
		t.Fatal(err)
	}
	path := "/conversations/" + conv.String()
	body := wantPage(t, consoleServer(t, s, consoleConfig{keys: ledger}), path, http.StatusOK, `id="crash-dead-letter"`, "Signatures checked with the console's keys")
	journal := body[strings.Index(body, `id="crash-journal"`):]
	if strings.Contains(journal, `class="record"`) {
		t.Fatalf("the verified journal shows unsigned records:\n%s", journal)
	}
	wantPage(t, consoleServer(t, s, consoleConfig{keys: other}), path, http.StatusOK, `id="crash-no-dead-letter"`, "1 capsule(s) left out: their signature does not verify")
}

// TestConsoleCrashContextSaysAPlainParkedMessagesProvenanceIsUnverified:
// a plain message's provenance rides on the capsule's headers, which its
// signature does not cover, so even a verified capsule's parked message is
// labelled unverified.
func TestConsoleCrashContextSaysAPlainParkedMessagesProvenanceIsUnverified(t *testing.T) {
	s := seed(t)
	conv := parkedConversation(t, s)
	ledger := sign.NewRegistry()
	if err := ledger.Enroll("ledger", ledgerKey().Public()); err != nil {
		t.Fatal(err)
	}
	wantPage(t, consoleServer(t, s, consoleConfig{keys: ledger}), "/conversations/"+conv.String(), http.StatusOK,
		`id="crash-dead-letter"`, `id="crash-provenance-unverified"`)
}

// TestConsoleCrashContextIsBounded: the journal tail holds the newest
// crashJournalRecords records of a long conversation.
func TestConsoleCrashContextIsBounded(t *testing.T) {
	s := seed(t)
	conv := parkedConversation(t, s)
	for i := range 2 * crashJournalRecords {
		if _, err := s.client.SendPlain(t.Context(), runtime.TopicCommands, wire.Provenance{Conversation: conv, Agent: "shop"}, fmt.Appendf(nil, "note %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	body := wantPage(t, consoleServer(t, s, consoleConfig{}), "/conversations/"+conv.String(), http.StatusOK, `id="crash-journal"`)
	journal := body[strings.Index(body, `id="crash-journal"`):]
	if n := strings.Count(journal, `class="record"`); n != crashJournalRecords || !strings.Contains(journal, fmt.Sprintf("note %d", 2*crashJournalRecords-1)) {
		t.Fatalf("the journal tail shows %d records, want the newest %d", n, crashJournalRecords)
	}
}

// TestConsoleCrashContextFailureIsShownNotFatal: a crash context that
// cannot be read (here the zero conversation, which crashcontext refuses)
// is said in its section; the page still renders.
func TestConsoleCrashContextFailureIsShownNotFatal(t *testing.T) {
	s := seed(t)
	c, err := newConsole(s.tr, consoleConfig{})
	if err != nil {
		t.Fatal(err)
	}
	sec := c.crashContext(t.Context(), wire.ID{}, newBodyBudget())
	if sec.Error == "" || sec.Found {
		t.Fatalf("the zero conversation's crash context: %+v", sec)
	}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if sec := c.crashContext(canceled, s.conv, newBodyBudget()); sec.Error == "" || !errors.Is(canceled.Err(), context.Canceled) {
		t.Fatalf("a canceled read: %+v", sec)
	}
}

// TestBrowserShowsTheCrashContextOfAConversation opens a crashed
// conversation's page, follows the crash section's link to the capsule,
// and opens a conversation that never existed.
func TestBrowserShowsTheCrashContextOfAConversation(t *testing.T) {
	ctx := browser(t)
	s := seed(t)
	conv := parkedConversation(t, s)
	srv := consoleServer(t, s, consoleConfig{addr: redactAddr(s.addr)})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/conversations/"+conv.String()), chromedp.WaitVisible(chromedp.CSS("#crash-dead-letter"))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#crash-reason"); got != "rejected" {
		t.Fatalf("the crash section's reason is %q", got)
	}
	if got := text(t, ctx, "#crash-detail"); !strings.Contains(got, `cannot book "bad amount"`) {
		t.Fatalf("the crash section's detail is %q", got)
	}
	if got := text(t, ctx, "#crash-parked pre.body"); got != "bad amount" {
		t.Fatalf("the parked message reads %q", got)
	}
	if got := text(t, ctx, "#crash-decision-reason"); got != "payments are frozen" {
		t.Fatalf("the last decision's reason is %q", got)
	}
	bodies, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#crash-journal pre.body")].map(p => p.innerText)`))
	if err != nil || strings.Join(bodies, ",") != "bad amount,ok fine" {
		t.Fatalf("the journal tail reads %q (%v), want the two commands oldest first", bodies, err)
	}
	screenshot(t, ctx, "crash-context")
	if err := clickAndLoad(ctx, "#crash-dead-letter a"); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#reason"); got != "rejected" {
		t.Fatalf("the capsule page the crash section links to shows reason %q", got)
	}
	never := s.client.IDs().NewID()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/conversations/"+never.String())); err != nil {
		t.Fatal(err)
	}
	if got := text(t, ctx, "#error-message"); !strings.Contains(got, never.String()) || !strings.Contains(got, "no journal record, dead letter or decision") {
		t.Fatalf("a conversation that never existed reads %q", got)
	}
}
