package conversation_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// hugeTopic claims far more partitions than the log has, as a hostile or
// corrupt server might; the partitions it does not have are empty.
type hugeTopic struct {
	runtime.Transport
	tails atomic.Int64
}

func (h *hugeTopic) Partitions(context.Context, string) (uint32, error) { return 1 << 20, nil }

func (h *hugeTopic) NextOffset(ctx context.Context, topic string, p uint32) (uint64, error) {
	h.tails.Add(1)
	if p > 0 {
		return 0, nil
	}
	return h.Transport.NextOffset(ctx, topic, p)
}

func TestAPartitionCountIsClampedTo1024(t *testing.T) {
	ctx := context.Background()
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(ctx, 1, "turns"); err != nil {
		t.Fatal(err)
	}
	conv := wire.IDFromUint128(3, 4)
	prov := wire.Provenance{Conversation: conv}
	if _, err := runtime.NewClient(log, runtime.ClientConfig{}).SendPlain(ctx, "turns", prov, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	huge := &hugeTopic{Transport: log}
	h, err := conversation.Assemble(ctx, huge, conv, conversation.Options{Topics: []string{"turns"}})
	if err != nil || len(h) != 1 {
		t.Fatalf("assembled %d records, %v", len(h), err)
	}
	if n := huge.tails.Load(); n != 1024 {
		t.Fatalf("read %d partitions, want 1024, the clamp", n)
	}
}
