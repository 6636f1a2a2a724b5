package iggytest

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"

	"github.com/zeebo/xxh3"

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
// u64 current_offset, u32 count, then the messages in the framing's layout
// (appendMessages, appendBatches).
func (s *Server) poll(c *conn, p []byte, f framing) ([]byte, error) {
	var fit func([]logstore.Record) int
	if f == framingVSR {
		fit = func(recs []logstore.Record) int { return batchesFit(recs, maxFrame-vsrHeaderSize-pollHeaderSize) }
	}
	part, cur, recs, err := s.pollRecords(c, p, fit)
	if err != nil {
		return nil, err
	}
	head := pollHeader(nil, part, cur, uint32(len(recs)))
	if f == framingVSR {
		return appendBatches(head, part, recs), nil
	}
	return appendMessages(head, recs), nil
}

// pollRecords runs a poll: the partition it read, that partition's current
// offset and the records read. fit, when set, is how many leading records
// of those read the reply holds; the rest are left for the next poll, and
// an auto-commit stores only what is answered.
func (s *Server) pollRecords(c *conn, p []byte, fit func([]logstore.Record) int) (part uint32, current uint64, recs []logstore.Record, err error) {
	r := reader{b: p}
	cr := r.consumer()
	sid, tid := r.ident(), r.ident()
	part, hasPart := r.optPartition()
	kind := r.u8()
	value := r.u64()
	count := r.u32()
	autoCommit := r.u8() != 0
	if err := r.done(); err != nil {
		return 0, 0, nil, err
	}
	if err := cr.check(); err != nil {
		return 0, 0, nil, err
	}
	if kind < pollOffset || kind > pollNext {
		return 0, 0, nil, fail(StatusInvalidCommand, "unknown polling strategy")
	}
	_, t, err := s.resolveTopicLocked(sid, tid)
	if err != nil {
		return 0, 0, nil, err
	}
	tg, err := c.resolvePollTarget(t, cr, part, hasPart)
	if err != nil {
		return 0, 0, nil, err
	}
	if tg.none {
		return 0, 0, nil, nil
	}
	if tg.seat != nil {
		tg.seat.current, tg.seat.polled = tg.partition, true
	}
	info, err := t.PartitionInfo(tg.partition)
	if err != nil {
		return 0, 0, nil, err
	}
	cur := info.CurrentOffset
	if count == 0 {
		return tg.partition, cur, nil, nil
	}
	switch kind {
	case pollOffset:
		if value > cur {
			return tg.partition, cur, nil, nil
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
		return 0, 0, nil, err
	}
	if fit != nil {
		recs = recs[:fit(recs)]
	}
	if autoCommit && len(recs) > 0 {
		if err := t.StoreOffset(tg.key, tg.partition, recs[len(recs)-1].Offset); err != nil {
			return 0, 0, nil, err
		}
	}
	return tg.partition, cur, recs, nil
}

// pollHeaderSize is the size of a poll reply's header (pollHeader).
const pollHeaderSize = 16

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

// Layout of the VSR framing's message batches (Iggy 0.9).
const (
	batchHeaderSize   = 256
	batchMessageSize  = 48
	batchOffLength    = 32 // u64, the batch header and its messages
	batchOffChecksum  = 40 // u64
	batchOffCount     = 48 // u32
	batchReservedFrom = 52
)

// appendBatches appends recs as VSR message batches: a 256-byte batch
// header (u64 partition, base offset, base timestamp, origin timestamp,
// length, checksum, u32 message count), then each message: checksum,
// u128 id, u32 offset delta, u32 origin timestamp delta, u32 user headers
// length, u32 payload length, u64 reserved, the payload, the user headers.
// A batch has one timestamp, so each run of records stored together is a
// batch of its own. Each message's checksum is XXH3-64 of its frame after
// the checksum; the batch's hashes its header fields and the message
// checksums (sealBatch), as Iggy 0.9 sets them.
func appendBatches(b []byte, partition uint32, recs []logstore.Record) []byte {
	for len(recs) > 0 {
		n := batchRun(recs)
		start := len(b)
		b = appendBatch(b, partition, recs[:n])
		sealBatch(b[start:])
		recs = recs[n:]
	}
	return b
}

// batchesFit is how many leading records of recs appendBatches writes in
// at most room bytes: Iggy's frames have a maximum size, and a poll reply
// over it is one no client can read.
func batchesFit(recs []logstore.Record, room int) int {
	used := 0
	for i := 0; i < len(recs); {
		n := batchRun(recs[i:])
		used += batchHeaderSize
		for j := i; j < i+n; j++ {
			used += batchMessageSize + len(recs[j].Payload) + recs[j].Headers.Size()
			if used > room {
				return j
			}
		}
		i += n
	}
	return len(recs)
}

// sealBatch sets the message checksums and the batch checksum of a
// well-formed batch.
func sealBatch(batch []byte) {
	sums := xxh3.New()
	writeBatchHeaderFields(sums, batch)
	for pos := batchHeaderSize; pos < len(batch); {
		end := pos + batchMessageSize + int(binary.LittleEndian.Uint32(batch[pos+32:])) + int(binary.LittleEndian.Uint32(batch[pos+36:]))
		binary.LittleEndian.PutUint64(batch[pos:], xxh3.Hash(batch[pos+8:end]))
		_, _ = sums.Write(batch[pos : pos+8])
		pos = end
	}
	binary.LittleEndian.PutUint64(batch[batchOffChecksum:], sums.Sum64())
}

// writeBatchHeaderFields feeds the batch checksum the header fields it
// covers: partition, base offset, base timestamp, origin timestamp, length
// and message count.
func writeBatchHeaderFields(h *xxh3.Hasher, batch []byte) {
	_, _ = h.Write(batch[0:40])
	_, _ = h.Write(batch[batchOffCount : batchOffCount+4])
}

// batchRun is how many leading records share one batch: the same timestamp
// and origin timestamps a u32 delta above the first's.
func batchRun(recs []logstore.Record) int {
	first := recs[0]
	n := 1
	for n < len(recs) {
		r := recs[n]
		if r.Timestamp != first.Timestamp || r.Offset != first.Offset+uint64(n) ||
			r.OriginTimestamp < first.OriginTimestamp || r.OriginTimestamp-first.OriginTimestamp > math.MaxUint32 {
			break
		}
		n++
	}
	return n
}

func appendBatch(b []byte, partition uint32, recs []logstore.Record) []byte {
	size := batchHeaderSize
	for i := range recs {
		size += batchMessageSize + len(recs[i].Payload) + recs[i].Headers.Size()
	}
	first := recs[0]
	h := make([]byte, batchHeaderSize)
	binary.LittleEndian.PutUint64(h[0:], uint64(partition))
	binary.LittleEndian.PutUint64(h[8:], first.Offset)
	binary.LittleEndian.PutUint64(h[16:], first.Timestamp)
	binary.LittleEndian.PutUint64(h[24:], first.OriginTimestamp)
	binary.LittleEndian.PutUint64(h[batchOffLength:], uint64(size))
	binary.LittleEndian.PutUint32(h[batchOffCount:], uint32(len(recs)))
	b = slices.Grow(b, size)
	b = append(b, h...)
	for i := range recs {
		rec := &recs[i]
		b = putU64(b, 0)
		b = append(b, rec.ID[:]...)
		b = putU32(b, uint32(rec.Offset-first.Offset))
		b = putU32(b, uint32(rec.OriginTimestamp-first.OriginTimestamp))
		b = putU32(b, uint32(rec.Headers.Size()))
		b = putU32(b, uint32(len(rec.Payload)))
		b = putU64(b, 0)
		b = append(b, rec.Payload...)
		b = append(b, rec.Headers.Bytes()...)
	}
	return b
}
