package agui

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/internal/bridgetest"
	"github.com/lasergo/laser/runtime"
)

// gappedLog adds a partition to every topic whose tail is ahead of
// anything it can read, and moves on at each look: a range lost to
// retention or not yet readable.
type gappedLog struct {
	runtime.Transport
	tail *atomic.Uint64
}

func (g gappedLog) Partitions(ctx context.Context, topic string) (uint32, error) {
	n, err := g.Transport.Partitions(ctx, topic)
	return n + 1, err
}

func (g gappedLog) gap(ctx context.Context, topic string, p uint32) bool {
	n, _ := g.Transport.Partitions(ctx, topic)
	return p == n
}

func (g gappedLog) NextOffset(ctx context.Context, topic string, p uint32) (uint64, error) {
	if g.gap(ctx, topic, p) {
		return g.tail.Add(1), nil
	}
	return g.Transport.NextOffset(ctx, topic, p)
}

func (g gappedLog) ReadRange(ctx context.Context, topic string, p uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	if g.gap(ctx, topic, p) {
		return nil, nil
	}
	return g.Transport.ReadRange(ctx, topic, p, offset, count)
}

func TestATailPassReadsEveryPartitionPastAnEmptyRead(t *testing.T) {
	client := bridgetest.MemClient(t)
	h := &Handler{Client: bridgetest.Client(t, gappedLog{client.Transport(), new(atomic.Uint64)}), Topic: runtime.TopicLLMIO}
	// The partitions are visited in map order: enough passes that the gap
	// comes first in some.
	for range 20 {
		conv := client.IDs().NewID()
		rec := httptest.NewRecorder()
		s := &sseStream{h: h, w: rec, flusher: rec, conv: conv}
		var err error
		if s.next, err = h.tails(t.Context()); err != nil {
			t.Fatal(err)
		}
		w, err := bridge.OpenStream(client, bridge.StreamSpec{Topic: runtime.TopicLLMIO, From: "assistant", Conversation: conv, Correlation: conv})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Send(t.Context(), []byte("hi")); err != nil {
			t.Fatal(err)
		}
		s.tail(t.Context())
		if !strings.Contains(rec.Body.String(), `"delta":"hi"`) {
			t.Fatalf("one pass sent %q, want the chunk past the gap", rec.Body.String())
		}
	}
}
