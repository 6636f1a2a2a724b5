package a2a

import (
	"mime"
	"net/http"
	"slices"
	"strings"
)

// guard refuses what a web page could send the JSON-RPC endpoint from
// another site: a POST that is not JSON (a cross-site form or a text/plain
// fetch needs no CORS preflight, JSON does), and any request whose Origin is neither the
// server's own nor allowed. It answers the refusal and returns false.
func guard(w http.ResponseWriter, r *http.Request, allowed []string) bool {
	if r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			http.Error(w, "a2a: a POST carries application/json", http.StatusUnsupportedMediaType)
			return false
		}
	}
	if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r) && !slices.Contains(allowed, origin) {
		http.Error(w, "a2a: origin "+origin+" is not allowed", http.StatusForbidden)
		return false
	}
	return true
}

// sameOrigin reports whether origin is the one r was sent to.
func sameOrigin(origin string, r *http.Request) bool {
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return strings.EqualFold(origin, scheme+r.Host)
}
