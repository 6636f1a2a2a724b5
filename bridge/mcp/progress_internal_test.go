package mcp

import (
	"encoding/json"
	"testing"
)

func TestProgressTextIsAStringItemsTextAndOtherItemsJSON(t *testing.T) {
	for item, want := range map[string]string{`"Hello "`: "Hello ", `{"char":"g"}`: `{"char":"g"}`, `3`: `3`} {
		if got := progressText(json.RawMessage(item)); got != want {
			t.Fatalf("progressText(%s) = %q, want %q", item, got, want)
		}
	}
}
