package registry_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/figures"
	"github.com/lasergo/laser/internal/heapprobe"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// junkStatuses appends n progress statuses of about 1 KiB from n distinct
// sources, what any writer of the topic can append.
func junkStatuses(t *testing.T, tr runtime.Transport, topic string, n int) {
	t.Helper()
	ctx := context.Background()
	if err := tr.EnsureTopics(ctx, 1, topic); err != nil {
		t.Fatal(err)
	}
	op := wire.OperationProgress
	body := make([]byte, 1024)
	batch := make([]runtime.Outgoing, 0, 500)
	for i := range n {
		rec := wire.IDFromUint128(0x1a2b, uint64(i)+1)
		env := &wire.Envelope{Kind: wire.KindStatus, Record: &rec, Conversation: rec, Source: wire.AgentID("junk-" + string(rune('a'+i%26)) + rec.String()), Operation: &op, Body: body}
		payload, err := env.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, runtime.Outgoing{Headers: wire.EnvelopeHeaders(env, wire.ContentRaw), Payload: payload})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := tr.Publish(ctx, topic, batch...); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// The reproducer, scaled down: Refresh over junk status records
// held every decoded record until the end (+418 MiB for 300k); folding as
// a stream holds about one read batch.
func TestRefreshHoldsABoundedHeapOverAFloodOfJunkStatuses(t *testing.T) {
	n := 20_000
	if figures.Full() {
		n = 300_000
	}
	probe := heapprobe.Wrap(embedlog.New("registry", embedlog.Config{}))
	junkStatuses(t, probe, runtime.TopicRegistry, n)
	r := registry.New(probe, registry.Config{})
	probe.Reset()
	if err := r.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	held := probe.Held()
	t.Logf("refresh over %d junk statuses held %d KiB", n, held>>10)
	if limit := uint64(8 << 20); held > limit {
		t.Fatalf("refresh over %d junk statuses held %d MiB, want under %d MiB", n, held>>20, limit>>20)
	}
	if len(r.Cards()) != 0 {
		t.Fatal("junk statuses folded into cards")
	}
}
