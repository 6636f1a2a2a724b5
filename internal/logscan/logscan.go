// Package logscan reads a topic's records without joining a group or
// committing anything: the folds of package conversation (context
// assembly), memory, registry, workflow and humaninput are built with it.
package logscan

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/runtime"
)

// batch is how many records one ReadRange call asks for.
const batch = 1000

// Partition reads the records of one partition from offset from up to, not
// including, offset end, in batches, calling fn with each. It returns the
// offset to resume from: one past the last record read, or from when there
// was none.
func Partition(ctx context.Context, t runtime.Transport, topic string, partition uint32, from, end uint64, fn func(*runtime.Incoming)) (next uint64, err error) {
	next = from
	for next < end {
		recs, err := t.ReadRange(ctx, topic, partition, next, int(min(end-next, batch)))
		if err != nil {
			return next, fmt.Errorf("read %s/%d from %d: %w", topic, partition, next, err)
		}
		if len(recs) == 0 {
			break
		}
		for i := range recs {
			if recs[i].Offset >= end {
				return end, nil
			}
			fn(&recs[i])
		}
		next = recs[len(recs)-1].Offset + 1
	}
	return next, nil
}

// Topic reads every partition of topic from the offsets in from (missing
// partitions start at 0) up to each partition's current tail, calling fn
// with each record, and returns the offsets to resume from.
func Topic(ctx context.Context, t runtime.Transport, topic string, from map[uint32]uint64, fn func(*runtime.Incoming)) (map[uint32]uint64, error) {
	parts, err := t.Partitions(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", topic, err)
	}
	next := make(map[uint32]uint64, parts)
	for p := uint32(0); p < parts; p++ {
		end, err := t.NextOffset(ctx, topic, p)
		if err != nil {
			return nil, fmt.Errorf("scan %s/%d: %w", topic, p, err)
		}
		if next[p], err = Partition(ctx, t, topic, p, from[p], end, fn); err != nil {
			return nil, err
		}
	}
	return next, nil
}
