package runtime

import (
	"context"
	"fmt"
)

// warmDedup pre-fills the dedup window from each partition's consumed tail,
// so a restarted consumer still recognises duplicates of what it handled
// before. It reads only up to the group's stored offset: reading further
// would mark unhandled messages as seen and lose them.
//
// Unlike the reference, which reads only plain provenance headers here, AGDX
// records are decoded too, so their idempotency keys are warmed as well.
func (c *Consumer) warmDedup(ctx context.Context) error {
	partitions, err := c.t.Partitions(ctx, c.cfg.Topic)
	if err != nil {
		return err
	}
	partitions = min(partitions, maxWarmPartitions)
	depth := uint64(c.cfg.DedupWindow)
	warmed := 0
	for p := uint32(0); p < partitions; p++ {
		stored, ok, err := c.t.StoredOffset(ctx, c.cfg.Topic, c.cfg.Group, p)
		if err != nil {
			return fmt.Errorf("stored offset of partition %d: %w", p, err)
		}
		if !ok {
			continue
		}
		start := stored - min(stored, depth-1)
		count := int(stored - start + 1)
		records, err := c.t.ReadRange(ctx, c.cfg.Topic, p, start, count)
		if err != nil {
			return fmt.Errorf("read partition %d from %d: %w", p, start, err)
		}
		for i := range records {
			if records[i].Offset > stored {
				continue
			}
			m, err := DecodeRecord(c.cfg.Topic, &records[i], c.cfg.UnderstoodFeatures)
			if err != nil || m.Provenance.IdempotencyKey == "" {
				continue
			}
			if _, err := c.dedup.Observe(ctx, DedupKey(m.Provenance.Agent, m.Provenance.IdempotencyKey)); err != nil {
				return fmt.Errorf("dedup: %w", err)
			}
			warmed++
		}
	}
	c.log.Debug("warmed dedup window", "keys", warmed)
	return nil
}
