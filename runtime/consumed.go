package runtime

import "context"

// Consumed reports whether group has consumed the record at pos of topic:
// its stored offset on that partition has reached the record, so the
// record was handled, skipped, dropped or parked and will not be delivered
// to the group again.
func (c *Client) Consumed(ctx context.Context, topic, group string, pos Position) (bool, error) {
	stored, ok, err := c.t.StoredOffset(ctx, topic, group, pos.Partition)
	if err != nil {
		return false, err
	}
	return ok && stored >= pos.Offset, nil
}
