package iggytest

import (
	"github.com/lasergo/laser/internal/logstore"
)

// offsetRequest is the common head of the offset commands: consumer,
// stream, topic, optional partition.
type offsetRequest struct {
	consumer consumerRef
	sid, tid ident
	part     uint32
	hasPart  bool
}

func (r *reader) offsetRequest() offsetRequest {
	var o offsetRequest
	o.consumer = r.consumer()
	o.sid, o.tid = r.ident(), r.ident()
	o.part, o.hasPart = r.optPartition()
	return o
}

// getOffset (code 120) answers u32 partition_id, u64 current_offset,
// u64 stored_offset, or an empty OK when nothing is stored, the partition
// does not exist or the group does not. Reading a group's offset needs no
// membership; without a partition it reads partition 0.
func (s *Server) getOffset(p []byte) ([]byte, error) {
	r := reader{b: p}
	o := r.offsetRequest()
	if err := r.done(); err != nil {
		return nil, err
	}
	if err := o.consumer.check(); err != nil {
		return nil, err
	}
	_, t, err := s.resolveTopicLocked(o.sid, o.tid)
	if err != nil {
		return nil, err
	}
	part := uint32(0)
	if o.hasPart {
		part = o.part
	}
	key := singleKey(o.consumer.id)
	if o.consumer.kind == consumerGroup {
		g := lookupGroup(t, o.consumer.id)
		if g == nil {
			return nil, nil
		}
		key = logstore.GroupConsumerKey(g.Name())
	}
	info, err := t.PartitionInfo(part)
	if err != nil {
		return nil, nil
	}
	stored, ok := t.StoredOffset(key, part)
	if !ok {
		return nil, nil
	}
	out := putU32(nil, part)
	out = putU64(out, info.CurrentOffset)
	return putU64(out, stored), nil
}

// storeOffset (code 121): the offset request, then u64 offset. A group
// member may store only on a partition it owns (NotResolvedConsumer
// otherwise); without a partition the store goes to the partition it polled
// last. The offset must exist (InvalidOffset otherwise).
func (s *Server) storeOffset(c *conn, p []byte) ([]byte, error) {
	r := reader{b: p}
	o := r.offsetRequest()
	offset := r.u64()
	if err := r.done(); err != nil {
		return nil, err
	}
	t, key, part, err := s.resolveOffsetTarget(c, o)
	if err != nil {
		return nil, err
	}
	return nil, t.StoreOffset(key, part, offset)
}

// deleteOffset (code 122) forgets a stored offset, under the same rules as
// storeOffset.
func (s *Server) deleteOffset(c *conn, p []byte) ([]byte, error) {
	r := reader{b: p}
	o := r.offsetRequest()
	if err := r.done(); err != nil {
		return nil, err
	}
	t, key, part, err := s.resolveOffsetTarget(c, o)
	if err != nil {
		return nil, err
	}
	return nil, t.DeleteOffset(key, part)
}

// resolveOffsetTarget resolves where a store or delete applies.
func (s *Server) resolveOffsetTarget(c *conn, o offsetRequest) (*logstore.Topic, string, uint32, error) {
	if err := o.consumer.check(); err != nil {
		return nil, "", 0, err
	}
	_, t, err := s.resolveTopicLocked(o.sid, o.tid)
	if err != nil {
		return nil, "", 0, err
	}
	if o.consumer.kind == consumerSingle {
		part := uint32(0)
		if o.hasPart {
			part = o.part
		}
		return t, singleKey(o.consumer.id), part, nil
	}
	g := lookupGroup(t, o.consumer.id)
	if g == nil {
		return nil, "", 0, fail(StatusConsumerGroupIDNotFound, "consumer group "+o.consumer.id.String()+" not found")
	}
	notResolved := fail(StatusNotResolvedConsumer, "the consumer group member does not own the partition")
	seat, err := c.membershipLocked(g)
	if err != nil {
		return nil, "", 0, notResolved
	}
	owned, _ := g.Assigned(c.member())
	part := o.part
	if !o.hasPart {
		switch {
		case seat.polled:
			part = seat.current
		case len(owned) > 0:
			part = owned[0]
		default:
			return nil, "", 0, notResolved
		}
	}
	if !contains(owned, part) {
		return nil, "", 0, notResolved
	}
	return t, logstore.GroupConsumerKey(g.Name()), part, nil
}
