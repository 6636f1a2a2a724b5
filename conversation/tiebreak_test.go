package conversation_test

import (
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TestEqualBrokerTimestampsOrderByTopicIndexOverTheLog stops the embedded
// log's clock so every record shares one broker timestamp: the order is
// then the listed topic order, then partition, then offset, whatever the
// publish order was.
func TestEqualBrokerTimestampsOrderByTopicIndexOverTheLog(t *testing.T) {
	ctx := context.Background()
	log := embedlog.New("laser", embedlog.Config{Clock: lasertest.NewManualClock(time.Unix(1_700_000_000, 0))})
	if err := log.EnsureTopics(ctx, 1, "first", "second"); err != nil {
		t.Fatal(err)
	}
	client := runtime.NewClient(log, runtime.ClientConfig{})
	conv := wire.IDFromUint128(1, 2)
	for _, s := range []struct{ topic, body string }{{"second", "s0"}, {"first", "f0"}, {"second", "s1"}, {"first", "f1"}} {
		prov := wire.Provenance{Conversation: conv}
		if _, err := client.SendPlain(ctx, s.topic, prov, []byte(s.body)); err != nil {
			t.Fatal(err)
		}
	}
	h, err := conversation.Assemble(ctx, log, conv, conversation.Options{Topics: []string{"first", "second"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Bodies(); len(got) != 4 || string(got[0]) != "f0" || string(got[1]) != "f1" || string(got[2]) != "s0" || string(got[3]) != "s1" {
		t.Fatalf("order %q, want f0 f1 s0 s1", got)
	}
	h, err = conversation.Assemble(ctx, log, conv, conversation.Options{Topics: []string{"second", "first"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Bodies(); string(got[0]) != "s0" || string(got[3]) != "f1" {
		t.Fatalf("order with the topics swapped %q, want s0 s1 f0 f1", got)
	}
}
