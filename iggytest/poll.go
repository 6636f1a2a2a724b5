package iggytest

import (
	"strconv"

	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/internal/xxh32"
)

// Consumer kinds.
const (
	consumerSingle = 1
	consumerGroup  = 2
)

// Polling strategies.
const (
	pollOffset    = 1
	pollTimestamp = 2
	pollFirst     = 3
	pollLast      = 4
	pollNext      = 5
)

// consumerRef is a parsed Consumer: u8 kind, Identifier.
type consumerRef struct {
	kind uint8
	id   ident
}

func (r *reader) consumer() consumerRef { return consumerRef{kind: r.u8(), id: r.ident()} }

func (c consumerRef) check() error {
	if c.kind != consumerSingle && c.kind != consumerGroup {
		return fail(StatusInvalidCommand, "unknown consumer kind")
	}
	return checkIdents(c.id)
}

// singleKey is the offset key of a single consumer. Iggy reduces a named
// consumer to xxHash32 of its name, so a name and the number it hashes to
// share offsets there and here.
func singleKey(id ident) string {
	n := id.id
	if !id.numeric {
		n = xxh32.Sum32([]byte(id.name), 0)
	}
	return logstore.SingleConsumerKey(strconv.FormatUint(uint64(n), 10))
}

// target is where a consumer's poll or offset request applies.
type target struct {
	key       string
	partition uint32
	seat      *membership // nil for a single consumer
	// none means the request resolves to no partition: a group member that
	// owns nothing, or one naming a partition it does not own.
	none bool
}

// resolvePollTarget resolves the partition a poll reads: the given one or
// 0 for a single consumer; for a group member the given one if it owns it,
// else the next of its partitions in round robin.
func (c *conn) resolvePollTarget(t *logstore.Topic, cr consumerRef, part uint32, hasPart bool) (target, error) {
	if cr.kind == consumerSingle {
		if !hasPart {
			part = 0
		}
		if part >= t.Partitions() {
			return target{}, fail(StatusPartitionNotFound, "partition not found")
		}
		return target{key: singleKey(cr.id), partition: part}, nil
	}
	g := lookupGroup(t, cr.id)
	if g == nil {
		return target{}, fail(StatusConsumerGroupIDNotFound, "consumer group "+cr.id.String()+" not found")
	}
	seat, err := c.membershipLocked(g)
	if err != nil {
		return target{}, err
	}
	owned, _ := g.Assigned(c.member())
	tg := target{key: logstore.GroupConsumerKey(g.Name()), seat: seat}
	if hasPart {
		if !contains(owned, part) {
			return target{none: true}, nil
		}
		tg.partition = part
		return tg, nil
	}
	if len(owned) == 0 {
		return target{none: true}, nil
	}
	tg.partition = owned[seat.next%len(owned)]
	seat.next = (seat.next + 1) % len(owned)
	return tg, nil
}

func contains(ps []uint32, p uint32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// poll (code 100): consumer, stream, topic, optional partition, u8 strategy,
// u64 value, u32 count, u8 auto_commit. Answers u32 partition_id,
// u64 current_offset, u32 count, then each message: the 64-byte header, the
// payload, the user headers.
func (s *Server) poll(c *conn, p []byte) ([]byte, error) {
	r := reader{b: p}
	cr := r.consumer()
	sid, tid := r.ident(), r.ident()
	part, hasPart := r.optPartition()
	kind := r.u8()
	value := r.u64()
	count := r.u32()
	autoCommit := r.u8() != 0
	if err := r.done(); err != nil {
		return nil, err
	}
	if err := cr.check(); err != nil {
		return nil, err
	}
	if kind < pollOffset || kind > pollNext {
		return nil, fail(StatusInvalidCommand, "unknown polling strategy")
	}
	_, t, err := s.resolveTopicLocked(sid, tid)
	if err != nil {
		return nil, err
	}
	tg, err := c.resolvePollTarget(t, cr, part, hasPart)
	if err != nil {
		return nil, err
	}
	if tg.none {
		return pollHeader(nil, 0, 0, 0), nil
	}
	if tg.seat != nil {
		tg.seat.current, tg.seat.polled = tg.partition, true
	}
	info, err := t.PartitionInfo(tg.partition)
	if err != nil {
		return nil, err
	}
	cur := info.CurrentOffset
	if count == 0 {
		return pollHeader(nil, tg.partition, cur, 0), nil
	}
	var recs []logstore.Record
	switch kind {
	case pollOffset:
		if value > cur {
			return pollHeader(nil, tg.partition, cur, 0), nil
		}
		recs, err = t.Read(tg.partition, value, int(count))
	case pollTimestamp:
		recs, err = t.ReadFromTimestamp(tg.partition, value, int(count))
	case pollFirst:
		recs, err = t.Read(tg.partition, 0, int(count))
	case pollLast:
		n := uint64(count)
		if n > cur+1 {
			n = cur + 1
		}
		recs, err = t.Read(tg.partition, cur+1-n, int(count))
	case pollNext:
		from := uint64(0)
		if off, ok := t.StoredOffset(tg.key, tg.partition); ok {
			from = off + 1
		}
		recs, err = t.Read(tg.partition, from, int(count))
	}
	if err != nil {
		return nil, err
	}
	if autoCommit && len(recs) > 0 {
		if err := t.StoreOffset(tg.key, tg.partition, recs[len(recs)-1].Offset); err != nil {
			return nil, err
		}
	}
	return appendMessages(pollHeader(nil, tg.partition, cur, uint32(len(recs))), recs), nil
}

func pollHeader(b []byte, partition uint32, current uint64, count uint32) []byte {
	b = putU32(b, partition)
	b = putU64(b, current)
	return putU32(b, count)
}

// appendMessages appends each record as an Iggy message: checksum (0 here),
// u128 id, u64 offset, u64 timestamp, u64 origin timestamp, u32 user
// headers length, u32 payload length, u64 reserved, then the payload and
// the user headers.
func appendMessages(b []byte, recs []logstore.Record) []byte {
	n := len(b)
	for i := range recs {
		n += messageHeaderSize + len(recs[i].Payload) + recs[i].Headers.Size()
	}
	out := make([]byte, len(b), n)
	copy(out, b)
	for i := range recs {
		rec := &recs[i]
		out = putU64(out, 0)
		out = append(out, rec.ID[:]...)
		out = putU64(out, rec.Offset)
		out = putU64(out, rec.Timestamp)
		out = putU64(out, rec.OriginTimestamp)
		out = putU32(out, uint32(rec.Headers.Size()))
		out = putU32(out, uint32(len(rec.Payload)))
		out = putU64(out, 0)
		out = append(out, rec.Payload...)
		out = append(out, rec.Headers.Bytes()...)
	}
	return out
}
