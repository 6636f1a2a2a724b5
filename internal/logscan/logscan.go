package conversation

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/runtime"
)

// ScanTopic reads every partition of topic from the offsets in from
// (missing partitions start at 0) up to each partition's current tail,
// calling fn with each record, and returns the offsets to resume from. It
// joins no group and commits nothing; the agent registry, workflow journals
// and human-input requests are folded with it.
func ScanTopic(ctx context.Context, t runtime.Transport, topic string, from map[uint32]uint64, fn func(*runtime.Incoming)) (map[uint32]uint64, error) {
	parts, err := t.Partitions(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("conversation: scan %s: %w", topic, err)
	}
	next := make(map[uint32]uint64, parts)
	for p := uint32(0); p < parts; p++ {
		end, err := t.NextOffset(ctx, topic, p)
		if err != nil {
			return nil, fmt.Errorf("conversation: scan %s/%d: %w", topic, p, err)
		}
		if next[p], err = Scan(ctx, t, topic, p, from[p], end, fn); err != nil {
			return nil, err
		}
	}
	return next, nil
}
