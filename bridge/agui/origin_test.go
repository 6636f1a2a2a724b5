package agui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/bridge/agui"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// runCounter is a Handler.Run that counts the runs it was asked to start.
func runCounter(n *atomic.Int64) func(context.Context, agui.RunInput) (*wire.Envelope, error) {
	return func(context.Context, agui.RunInput) (*wire.Envelope, error) { n.Add(1); return nil, nil }
}

// postRaw posts a RunAgentInput with the given content type and Origin
// (none when empty) and returns the response status.
func postRaw(t *testing.T, url, contentType, origin string) int {
	t.Helper()
	body := `{"threadId":"` + bridgetest.MemClient(t).IDs().NewID().String() + `","runId":"r","messages":[]}`
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
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestARunPostedAsPlainTextIsRefusedUnstarted(t *testing.T) {
	var runs atomic.Int64
	srv := httptest.NewServer(&agui.Handler{Client: bridgetest.MemClient(t), Topic: runtime.TopicLLMIO, Run: runCounter(&runs)})
	t.Cleanup(srv.Close)
	// text/plain is what a cross-site form or fetch sends without a preflight.
	for _, ct := range []string{"text/plain", ""} {
		if got := postRaw(t, srv.URL, ct, ""); got != http.StatusUnsupportedMediaType {
			t.Errorf("content type %q: status %d, want 415", ct, got)
		}
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("%d runs started, want none", n)
	}
}

func TestARunFromAForeignOriginIsRefusedUnstarted(t *testing.T) {
	var runs atomic.Int64
	srv := httptest.NewServer(&agui.Handler{Client: bridgetest.MemClient(t), Topic: runtime.TopicLLMIO, Run: runCounter(&runs)})
	t.Cleanup(srv.Close)
	if got := postRaw(t, srv.URL, "application/json", "http://evil.example"); got != http.StatusForbidden {
		t.Fatalf("status %d, want 403", got)
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("%d runs started, want none", n)
	}
}

func TestARunFromTheServersOwnOrAnAllowedOriginStarts(t *testing.T) {
	var runs atomic.Int64
	h := &agui.Handler{Client: bridgetest.MemClient(t), Topic: runtime.TopicLLMIO, Run: runCounter(&runs), AllowedOrigins: []string{"http://app.example:3000"}}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, origin := range []string{srv.URL, "http://app.example:3000", ""} {
		if got := postRaw(t, srv.URL, "application/json; charset=utf-8", origin); got != http.StatusOK {
			t.Errorf("origin %q: status %d, want 200", origin, got)
		}
	}
}
