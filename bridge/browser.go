package bridge

import (
	"mime"
	"net/http"
	"slices"
	"strings"
)

// RefuseCrossSite answers and returns true for what a web page on another
// site could send a bridge's HTTP endpoint: a POST that is not
// application/json (a cross-site form or a text/plain fetch needs no CORS
// preflight, JSON does) with 415, and a request whose Origin is neither the
// server's own nor in allowed with 403. name prefixes the refusal's text.
func RefuseCrossSite(w http.ResponseWriter, r *http.Request, name string, allowed []string) bool {
	if r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			http.Error(w, name+": a POST carries application/json", http.StatusUnsupportedMediaType)
			return true
		}
	}
	if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r) && !slices.Contains(allowed, origin) {
		http.Error(w, name+": origin "+origin+" is not allowed", http.StatusForbidden)
		return true
	}
	return false
}

// sameOrigin reports whether origin is the one r was sent to.
func sameOrigin(origin string, r *http.Request) bool {
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return strings.EqualFold(origin, scheme+r.Host)
}
