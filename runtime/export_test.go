package runtime

import "strings"

// KeyedByPayloadPrefix returns c ordering records by their payload up to
// its first '-', read from the record alone: a scheduler key written the
// way a new one would be, for a test to show it gets order per key from
// the same machinery as the others. Like OrderedBy, only PerConversation
// honours it.
func KeyedByPayloadPrefix(c Concurrency) Concurrency {
	c.key = &scheduleKey{
		of: func(rec *Incoming, _ *Message) orderKey {
			if name, _, ok := strings.Cut(string(rec.Payload), "-"); ok {
				return orderKey{name: name, byName: true}
			}
			return orderKey{partition: rec.Partition}
		},
		fair: true,
		turn: 1,
	}
	return c
}

// SchedulerState reports, for a test that orders its steps by it, how many
// workers back from a retry wait are waiting for a slot and whether the
// running scheduler is closing (no record starts any more).
func SchedulerState(c *Consumer) (returners int, closing bool) {
	sc := c.hooks.sched.Load()
	if sc == nil {
		return 0, false
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return len(sc.returners), sc.closing
}
