package runtime

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/dedup"
)

// warmDedup pre-fills the dedup window from each partition's consumed tail,
// so a restarted consumer still recognises duplicates of what it handled
// before. It reads only up to the group's stored offset: reading further
// would mark unhandled messages as seen and lose them.
//
// Unlike the reference, which reads only plain provenance headers here, AGDX
// records are decoded too, so their idempotency keys are warmed as well, and
// a record is replayed through the same gates the live path applied to it:
// one addressed to another agent, refused by the signature gate or fenced
// out never marked its key then, so it does not mark it now. The replay and
// fence windows are warmed on the way, so after a warm restart a stale
// fence is still dropped (a documented deviation: the README's decisions).
//
// Under a Verifier it runs even without WarmDedup, for the replay window
// alone: a restarted consumer must still refuse the replay of a signed
// record it handled before, and the window then reads the larger of the
// two depths.
func (c *Consumer) warmDedup(ctx context.Context) error {
	partitions, err := c.t.Partitions(ctx, c.cfg.Topic)
	if err != nil {
		return err
	}
	partitions = min(partitions, maxWarmPartitions)
	depth := uint64(0)
	if c.cfg.WarmDedup {
		depth = uint64(c.cfg.DedupWindow)
	}
	if c.cfg.Verifier != nil {
		depth = max(depth, replayWindow)
	}
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
			if err != nil || !c.passedGates(m) || !c.cfg.WarmDedup || m.Provenance.IdempotencyKey == "" {
				continue
			}
			key := dedup.Key(c.senderScope(m), m.Provenance.IdempotencyKey)
			fresh, err := c.observeKey(ctx, key, nil)
			if err != nil {
				return fmt.Errorf("dedup: %w", err)
			}
			if fresh {
				// Committed, so handled or parked: a two-step store
				// remembers it rather than holding a claim.
				if err := c.completeKey(ctx, nil, key); err != nil {
					return fmt.Errorf("dedup: %w", err)
				}
			}
			warmed++
		}
	}
	c.log.Debug("warmed dedup window", "keys", warmed)
	return nil
}
