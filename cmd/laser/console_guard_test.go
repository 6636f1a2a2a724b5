package main

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/runtime"
)

// hostRequest sends method path to srv naming host in the Host header (and
// in Origin), as a page on a rebound name would.
func hostRequest(t *testing.T, srvURL, method, path, host string, form url.Values, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srvURL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Origin", "http://"+host)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestConsoleRefusesAForeignHostWithoutAToken(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{write: true, unverified: true})
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		path := "/dlq"
		if method == http.MethodPost {
			path = "/dlq/redrive"
		}
		code, body := hostRequest(t, srv.URL, method, path, "evil.example:8088", url.Values{"capsule": {"1:0"}, "confirm": {"yes"}})
		if code != http.StatusMisdirectedRequest {
			t.Fatalf("%s %s with Host evil.example: status %d, want 421:\n%s", method, path, code, body)
		}
	}
	for _, host := range []string{"localhost:8088", "127.0.0.1:8088", "[::1]:8088"} {
		if code, body := hostRequest(t, srv.URL, http.MethodGet, "/dlq", host, nil); code != http.StatusOK {
			t.Fatalf("GET with Host %s: status %d:\n%s", host, code, body)
		}
	}
}

func TestConsoleWithATokenServesAnyHost(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{token: "s3cret"})
	if code, body := hostRequest(t, srv.URL, http.MethodGet, "/agents", "console.example:8088", nil, "X-Laser-Token", "s3cret"); code != http.StatusOK {
		t.Fatalf("a tokened console refused a named host: status %d:\n%s", code, body)
	}
}

func TestConsoleRefusesANonLoopbackListenNamingItsFlag(t *testing.T) {
	s := seed(t)
	code, _, errOut := laser(t, "console", "--listen", "0.0.0.0:0", "--addr", s.addr)
	if code != exitUsage || !strings.Contains(errOut, `console --listen "0.0.0.0:0" is not a loopback address`) {
		t.Fatalf("console --listen 0.0.0.0:0: exit %d, stderr %q", code, errOut)
	}
}

func TestConsoleShutdownEndsOpenTails(t *testing.T) {
	s := seed(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"console", "--addr", s.addr, "--listen", "127.0.0.1:0"}, &out, &errOut)
	}()
	safe, safeCancel := context.WithTimeout(t.Context(), 10*time.Second) // a fail-safe, not a measured wait
	defer safeCancel()
	console, err := out.line(safe, "laser console: ")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(safe, http.MethodGet, console+"tail/events?topic="+runtime.TopicCommands, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tail: status %d", resp.StatusCode)
	}
	cancel()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("the open tail was not ended by the console's shutdown: %v", err)
	}
	if code := <-done; code != exitOK || strings.Contains(errOut.String(), "shutdown") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

func TestConsoleTakesTheTokenOutOfTheURL(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{token: "s3cret"})
	client := *srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Get(srv.URL + "/topics?token=s3cret&x=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/topics?x=1" {
		t.Fatalf("the token stays in the URL: status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if !strings.Contains(resp.Header.Get("Set-Cookie"), tokenCookie+"=s3cret") {
		t.Fatalf("no cookie for the right token: %q", resp.Header.Get("Set-Cookie"))
	}
	resp, err = client.Get(srv.URL + "/topics?token=wrong")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Set-Cookie") != "" {
		t.Fatalf("a wrong token: status %d, cookie %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
}

func TestConsoleServesAssetsButNoListing(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{})
	wantPage(t, srv, "/static/console.css", http.StatusOK)
	for _, path := range []string{"/static/", "/static/."} {
		if code, body := get(t, srv, path); code != http.StatusNotFound || strings.Contains(body, "console.js") {
			t.Fatalf("GET %s: status %d:\n%s", path, code, body)
		}
	}
}

func TestConsoleRedactsErrorTexts(t *testing.T) {
	s := seed(t)
	srv := consoleServer(t, s, consoleConfig{redact: func(s string) string { return strings.ReplaceAll(s, "no.such", "[redacted]") }})
	for _, path := range []string{"/dlq?topic=no.such.dlq", "/approvals?topic=no.such.input", "/dlq/0:0?topic=no.such.dlq"} {
		if code, body := get(t, srv, path); code < 400 || strings.Contains(body, "no.such") || !strings.Contains(body, "[redacted]") {
			t.Fatalf("GET %s (status %d) shows an unredacted error:\n%s", path, code, body)
		}
	}
}
