package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
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
