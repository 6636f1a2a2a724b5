package a2a_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	a2ab "github.com/lasergo/laser/bridge/a2a"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/runtime"
)

// recordsOn counts the records on topic's first partition.
func recordsOn(t *testing.T, client *runtime.Client, topic string) uint64 {
	t.Helper()
	n, err := client.Transport().NextOffset(t.Context(), topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHandlerRefusesABodyOverTheLimitAndPublishesNothing(t *testing.T) {
	client := bridgetest.MemClient(t)
	if err := client.Transport().EnsureTopics(t.Context(), 1, desk.DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	b, err := a2ab.New(client, a2ab.Config{Operations: desk.DeskOperations()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Handler())
	t.Cleanup(srv.Close)
	big := strings.Repeat("x", a2ab.DefaultMaxBodyBytes+1)
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user",` +
		`"metadata":{"skill":"order"},"parts":[{"kind":"data","data":{"sku":"` + big + `","qty":1}}]}}}`
	before := recordsOn(t, client, desk.DeskListenTopic)
	res, err := http.Post(srv.URL, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", res.StatusCode)
	}
	if after := recordsOn(t, client, desk.DeskListenTopic); after != before {
		t.Fatalf("%d records were published for a refused body", after-before)
	}
}
