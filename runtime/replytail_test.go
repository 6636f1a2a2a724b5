package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
)

// flakyPartitions fails listing the reply topic's partitions once, as a
// connection being rebuilt does.
type flakyPartitions struct {
	*embedlog.Log
	failed atomic.Bool
}

func (f *flakyPartitions) Partitions(ctx context.Context, topic string) (uint32, error) {
	if topic == runtime.TopicResponses && f.failed.CompareAndSwap(false, true) {
		return 0, fmt.Errorf("listing partitions: %w", runtime.ErrTransient)
	}
	return f.Log.Partitions(ctx, topic)
}

// A transient failure to find the reply topic's tail fails the request
// before anything is sent, instead of reading the reply topic from its
// start (which, on a busy topic, holds every request up behind its whole
// history). Only a topic that does not exist yet is read from its start.
func TestATransientFailureFindingTheReplyTailFailsTheRequestUnsent(t *testing.T) {
	tr := &flakyPartitions{Log: embedlog.New("laser", embedlog.Config{})}
	c := newClient(t, tr, clock.System{}, nil)
	_, err := c.Request(context.Background(), runtime.Out{From: "shop", Target: "billing", Body: []byte("9.99")})
	if !errors.Is(err, runtime.ErrTransient) {
		t.Fatalf("Request = %v, want the transient error", err)
	}
	if next, err := tr.NextOffset(context.Background(), runtime.TopicCommands, 0); err != nil || next != 0 {
		t.Fatalf("commands partition 0 next offset %d (%v): the request was sent", next, err)
	}
	for p := uint32(1); p < 4; p++ {
		if next, _ := tr.NextOffset(context.Background(), runtime.TopicCommands, p); next != 0 {
			t.Fatalf("commands partition %d has %d records: the request was sent", p, next)
		}
	}
}
