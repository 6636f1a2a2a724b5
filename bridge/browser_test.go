package bridge_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lasergo/laser/bridge"
)

// TestRefuseCrossSiteLetsOnlyJSONFromItsOwnOrAnAllowedOriginThrough checks
// each answer of the cross-site guard the A2A and AG-UI bridges share.
func TestRefuseCrossSiteLetsOnlyJSONFromItsOwnOrAnAllowedOriginThrough(t *testing.T) {
	for _, c := range []struct {
		name, method, ct, origin string
		want                     int // 0: let through
	}{
		{"json without an origin", http.MethodPost, "application/json", "", 0},
		{"json with a charset", http.MethodPost, "application/json; charset=utf-8", "", 0},
		{"text/plain", http.MethodPost, "text/plain", "", http.StatusUnsupportedMediaType},
		{"a form", http.MethodPost, "application/x-www-form-urlencoded", "", http.StatusUnsupportedMediaType},
		{"no content type", http.MethodPost, "", "", http.StatusUnsupportedMediaType},
		{"its own origin", http.MethodPost, "application/json", "http://bridge.test", 0},
		{"an allowed origin", http.MethodPost, "application/json", "https://ui.example", 0},
		{"a foreign origin", http.MethodPost, "application/json", "https://evil.example", http.StatusForbidden},
		{"a GET from a foreign origin", http.MethodGet, "", "https://evil.example", http.StatusForbidden},
		{"a GET without an origin", http.MethodGet, "", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, "http://bridge.test/", strings.NewReader("{}"))
			if c.ct != "" {
				r.Header.Set("Content-Type", c.ct)
			}
			if c.origin != "" {
				r.Header.Set("Origin", c.origin)
			}
			w := httptest.NewRecorder()
			refused := bridge.RefuseCrossSite(w, r, "test", []string{"https://ui.example"})
			switch {
			case c.want == 0 && refused:
				t.Fatalf("refused with %d %q, want it let through", w.Code, w.Body.String())
			case c.want != 0 && (!refused || w.Code != c.want):
				t.Fatalf("refused=%v code %d, want refused with %d", refused, w.Code, c.want)
			}
		})
	}
}
