package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// seeded is a server with traffic of every kind the console shows: a
// card, a conversation (command, reply, a three-chunk stream), two dead
// letters (from poisoned) and whatever the test adds.
type seeded struct {
	addr   string
	tr     *iggy.Transport
	client *runtime.Client
	conv   wire.ID
}

func seed(t *testing.T) *seeded {
	t.Helper()
	addr, tr := poisoned(t)
	ctx := t.Context()
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = client.Close() })
	card := &wire.AgentCard{Name: "ledger", Version: "1.2.0", Capabilities: []wire.CapabilityDescriptor{{SkillID: "book"}, {SkillID: "refund"}}}
	if err := registry.PublishCard(ctx, client, "", "ledger", card, nil); err != nil {
		t.Fatal(err)
	}
	s := &seeded{addr: addr, tr: tr, client: client, conv: client.IDs().NewID()}
	source, _ := wire.ParseAgentID("shop")
	ledger, _ := wire.ParseAgentID("ledger")
	op := "quote"
	cmdID, corr := client.IDs().NewID(), client.IDs().NewID()
	send := func(topic string, env *wire.Envelope, ct wire.ContentType) {
		t.Helper()
		if _, err := rawsend.Envelope(ctx, client, topic, env, ct); err != nil {
			t.Fatal(err)
		}
	}
	send(runtime.TopicCommands, &wire.Envelope{Kind: wire.KindCommand, Record: &cmdID, Conversation: s.conv, Source: source, Target: &ledger,
		Correlation: &corr, Operation: &op, Body: []byte(`{"order":"o-42","amount":12.5}`)}, wire.ContentJSON)
	channel := client.IDs().NewID()
	for i, text := range []string{"the total ", "is 12.50 ", "EUR"} {
		seq := uint64(i)
		env := &wire.Envelope{Kind: wire.KindChunk, Conversation: s.conv, Source: ledger, Target: &source, Correlation: &corr, Cause: &cmdID,
			Channel: &channel, Sequence: &seq, Last: i == 2, Body: []byte(text)}
		if i == 0 {
			purpose := wire.OperationChat
			env.Operation = &purpose
		}
		send(runtime.TopicResponses, env, wire.ContentRaw)
	}
	return s
}

// consoleServer serves a console for s over loopback HTTP.
func consoleServer(t *testing.T, s *seeded, cfg consoleConfig) *httptest.Server {
	t.Helper()
	c, err := newConsole(s.tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return serveHandler(t, c)
}

// serveHandler serves c over loopback HTTP until t ends.
func serveHandler(t *testing.T, c *console) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(c.handler())
	t.Cleanup(srv.Close)
	return srv
}

// get fetches path and returns the status and body.
func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post submits form to path without following redirects.
func post(t *testing.T, srv *httptest.Server, path string, form url.Values) (int, string, http.Header) {
	t.Helper()
	client := *srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.PostForm(srv.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func wantPage(t *testing.T, srv *httptest.Server, path string, status int, texts ...string) string {
	t.Helper()
	code, body := get(t, srv, path)
	if code != status {
		t.Fatalf("GET %s: status %d, want %d:\n%s", path, code, status, body)
	}
	for _, want := range texts {
		if !strings.Contains(body, want) {
			t.Fatalf("GET %s does not show %q:\n%s", path, want, body)
		}
	}
	return body
}

func TestConsoleShowsAgentsWithCardsAndLag(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	wantPage(t, srv, "/agents", http.StatusOK, `data-agent="ledger"`, "1.2.0", ">book<", ">refund<", "fresh", "agent.commands</a>: ", ": 1 behind")
}

func TestConsoleShowsTopicsAndTheirRecords(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	wantPage(t, srv, "/topics", http.StatusOK, "agent.commands", "agent.dlq", "agent.registry")
	wantPage(t, srv, "/topics/agent.commands", http.StatusOK, "2 partition(s), 4 record(s).", "quote", "&#34;order&#34;: &#34;o-42&#34;", "Consumer groups", "ledger")
	wantPage(t, srv, "/topics/no.such.topic", http.StatusNotFound, "no topic")
}

func TestConsoleShowsAConversationInOrderAsATreeWithItsStream(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	body := wantPage(t, srv, "/conversations/"+s.conv.String(), http.StatusOK, s.conv.String(), "the total is 12.50 EUR", "3 text chunk(s) · ended", "depth-1")
	if i, j := strings.Index(body, "command"), strings.Index(body, "chunk"); i < 0 || j < 0 || i > j {
		t.Fatalf("the timeline does not put the command before its chunks")
	}
	wantPage(t, srv, "/conversations?q=quote", http.StatusOK, s.conv.String())
	wantPage(t, srv, "/conversations?q="+s.conv.String(), http.StatusOK, "the total") // redirected to the conversation
}

func TestConsoleAnswersBadInputWithAPage(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	for path, status := range map[string]int{
		"/conversations/not-an-id":                  http.StatusBadRequest,
		"/conversations/01ARZ3NDEKTSV4RRFFQ69G5FAV": http.StatusNotFound,
		"/dlq/zz":                   http.StatusBadRequest,
		"/dlq/0:999999":             http.StatusNotFound,
		"/dlq/99:0":                 http.StatusNotFound,
		"/dlq?topic=agent.commands": http.StatusNotFound,
		"/tail?topic=nope":          http.StatusNotFound,
		"/nope":                     http.StatusNotFound,
		"/conversations?q=" + strings.Repeat("x", 300): http.StatusBadRequest,
	} {
		code, body := get(t, srv, path)
		if code != status {
			t.Errorf("GET %s: status %d, want %d", path, code, status)
		}
		if status != http.StatusNotFound || !strings.HasPrefix(path, "/nope") {
			if !strings.Contains(body, `id="error-message"`) {
				t.Errorf("GET %s: no error page:\n%s", path, body)
			}
		}
	}
}

func TestConsoleRedrivesADeadLetterAfterConfirmation(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{write: true, unverified: true})
	ctx := t.Context()
	caps, err := readCapsules(ctx, s.tr, runtime.TopicDLQ)
	if err != nil {
		t.Fatal(err)
	}
	var bad string // the capsule of the plain "bad amount" message
	for _, c := range caps {
		if c.Capsule != nil && string(c.Capsule.Payload) == "bad amount" {
			bad = c.Position.String()
		}
	}
	wantPage(t, srv, "/dlq", http.StatusOK, `data-capsule="`+bad+`"`, "rejected", `cannot book &#34;bad amount&#34;`, "Nothing was redriven")
	wantPage(t, srv, "/dlq/"+bad, http.StatusOK, "bad amount", `id="redrive"`)
	before, _ := s.tr.NextOffset(ctx, runtime.TopicCommands, 0)
	code, body, _ := post(t, srv, "/dlq/redrive", url.Values{"capsule": {bad}})
	if code != http.StatusOK || !strings.Contains(body, `id="confirm"`) {
		t.Fatalf("redrive without confirmation: %d\n%s", code, body)
	}
	if after, _ := s.tr.NextOffset(ctx, runtime.TopicCommands, 0); after != before {
		t.Fatal("the confirmation page already republished")
	}
	code, body, _ = post(t, srv, "/dlq/redrive", url.Values{"capsule": {bad}, "confirm": {"yes"}})
	if code != http.StatusOK || !strings.Contains(body, "republished at") {
		t.Fatalf("confirmed redrive: %d\n%s", code, body)
	}
	wantPage(t, srv, "/dlq", http.StatusOK, `<td>`+bad+`</td>`, "not parked again")
	// The agent rejects the copy too: the ledger says where it was parked.
	// It parks the other commands not yet handled too (the seeded quote):
	// wait for the copy's own capsule.
	parked := make(chan string, 8)
	agent, err := s.client.NewAgent(runtime.AgentConfig{ID: "ledger", Listen: runtime.TopicCommands,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			return runtime.Reject(fmt.Errorf("still cannot book %q", c.Message().Body()))
		}),
		Tuning: runtime.Tuning{DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) {
			parked <- string(dl.Message.Body())
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	for body := ""; body != "bad amount"; {
		select {
		case body = <-parked:
		case <-time.After(20 * time.Second):
			t.Fatal("the redriven copy was not parked again")
		}
	}
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	wantPage(t, srv, "/dlq", http.StatusOK, "parked again as capsule")
	code, body, _ = post(t, srv, "/dlq/redrive", url.Values{"capsule": {bad}, "confirm": {"yes"}})
	if code != http.StatusOK || !strings.Contains(body, "skipped: already redriven") {
		t.Fatalf("second redrive: %d\n%s", code, body)
	}
}

func TestConsoleRedrivesOnlyVerifiedCapsulesUnlessToldOtherwise(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{write: true})
	code, body, _ := post(t, srv, "/dlq/redrive", url.Values{"capsule": {"0:0"}, "confirm": {"yes"}})
	if code != http.StatusForbidden || !strings.Contains(body, "--keys") {
		t.Fatalf("a console without keys redrove (status %d):\n%s", code, body)
	}
}

func TestConsoleWritesOnlyWhenAllowed(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	if code, _, _ := post(t, srv, "/dlq/redrive", url.Values{"capsule": {"1:0"}, "confirm": {"yes"}}); code != http.StatusForbidden {
		t.Fatalf("a read-only console redrove (status %d)", code)
	}
	if body := wantPage(t, srv, "/dlq", http.StatusOK); strings.Contains(body, `id="redrive"`) {
		t.Fatal("a read-only console offers to redrive")
	}
	w := consoleServer(t, s, consoleConfig{write: true, unverified: true})
	req, _ := http.NewRequest(http.MethodPost, w.URL+"/dlq/redrive", strings.NewReader("capsule=1:0&confirm=yes"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	resp, err := w.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-site form acted (status %d)", resp.StatusCode)
	}
}

func TestConsoleNeedsItsTokenWhenGiven(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{token: "s3cret"})
	if code, _ := get(t, srv, "/agents"); code != http.StatusUnauthorized {
		t.Fatalf("no token: status %d", code)
	}
	if code, _ := get(t, srv, "/agents?token=wrong"); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token: status %d", code)
	}
	jar := newJar(t)
	client := srv.Client()
	client.Jar = jar
	for _, path := range []string{"/agents?token=s3cret", "/topics"} { // the cookie carries it on
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s with the token: status %d", path, resp.StatusCode)
		}
	}
}

func TestConsoleAnswersAnApproval(t *testing.T) {
	addr, errs, answers := asking(t, "ship order o-42?")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, addr, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	srv := consoleServer(t, &seeded{addr: addr, tr: tr}, consoleConfig{write: true, unverified: true})
	v := pendingCorrelation(t, addr)
	wantPage(t, srv, "/approvals", http.StatusOK, "ship order o-42?", v.Correlation, `class="approve"`)
	code, _, h := post(t, srv, "/approvals/answer", url.Values{"correlation": {v.Correlation}, "verdict": {"approve"}, "text": {"go ahead"}})
	if code != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "answered=") {
		t.Fatalf("answer: status %d, location %q", code, h.Get("Location"))
	}
	if err := <-errs; err != nil {
		t.Fatalf("the asker got %v", err)
	}
	if got := <-answers; got != "go ahead" {
		t.Fatalf("the asker got %q", got)
	}
	if code, _, _ := post(t, srv, "/approvals/answer", url.Values{"correlation": {v.Correlation}, "verdict": {"maybe"}}); code != http.StatusBadRequest {
		t.Fatalf("a bad verdict: status %d", code)
	}
}

func TestConsoleShowsGovernanceDecisionsAndTheChainCheck(t *testing.T) {
	addr, tr, entries := governedServer(t, govern.Config{})
	srv := consoleServer(t, &seeded{addr: addr, tr: tr}, consoleConfig{})
	wantPage(t, srv, "/audit", http.StatusOK, `data-agent="payer"`, "block=2", "defer=1", "payments v1", "no wires", "every chain is complete")
	// The same records with one removed: the page says where the chain broke.
	republish(t, tr, "removed.audit", entries[0].Envelope, entries[2].Envelope)
	wantPage(t, srv, "/audit?topic=removed.audit", http.StatusOK, `id="chain">broken`, "removed")
	wantPage(t, srv, "/audit?topic=no.such.audit", http.StatusNotFound)
}
