package a2a_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	a2ab "github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
)

// sendOrder posts a message/send for desk's order skill with the given
// content type and Origin (none when empty) and returns the status.
func sendOrder(t *testing.T, url, contentType, origin string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user",` +
		`"metadata":{"skill":"order"},"parts":[{"kind":"data","data":{"sku":"a","qty":1}}]}}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// deskHandler serves a bridge to desk's operations under cfg.
func deskHandler(t *testing.T, cfg a2ab.Config) (*httptest.Server, func() uint64) {
	t.Helper()
	client := bridgetest.MemClient(t)
	if err := client.Transport().EnsureTopics(t.Context(), 1, desk.DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	cfg.Operations = desk.DeskOperations()
	b, err := a2ab.New(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(srv.Close)
	return srv, func() uint64 { return recordsOn(t, client, desk.DeskListenTopic) }
}

func TestHandlerRefusesAPlainTextPostAndPublishesNothing(t *testing.T) {
	srv, records := deskHandler(t, a2ab.Config{})
	// text/plain is what a cross-site form or fetch sends without a preflight.
	for _, ct := range []string{"text/plain", ""} {
		if got := sendOrder(t, srv.URL, ct, ""); got != http.StatusUnsupportedMediaType {
			t.Errorf("content type %q: status %d, want 415", ct, got)
		}
	}
	if n := records(); n != 0 {
		t.Fatalf("%d records published for refused posts", n)
	}
}

func TestHandlerRefusesAForeignOriginAndPublishesNothing(t *testing.T) {
	srv, records := deskHandler(t, a2ab.Config{})
	if got := sendOrder(t, srv.URL, "application/json", "http://evil.example"); got != http.StatusForbidden {
		t.Fatalf("status %d, want 403", got)
	}
	if n := records(); n != 0 {
		t.Fatalf("%d records published for a refused post", n)
	}
}

func TestHandlerServesItsOwnAndAnAllowedOrigin(t *testing.T) {
	srv, records := deskHandler(t, a2ab.Config{AllowedOrigins: []string{"http://app.example:3000"}})
	for _, origin := range []string{srv.URL, "http://app.example:3000", ""} {
		if got := sendOrder(t, srv.URL, "application/json; charset=utf-8", origin); got != http.StatusOK {
			t.Errorf("origin %q: status %d, want 200", origin, got)
		}
	}
	if n := records(); n != 3 {
		t.Fatalf("%d records published, want one per message", n)
	}
}
