package logstore

import (
	"sync"

	"github.com/lasergo/laser/internal/xxh32"
	"github.com/lasergo/laser/wire"
)

// messageHeaderBytes is the fixed Iggy message header each record costs in
// partition size accounting.
const messageHeaderBytes = 64

// Record is one message of a partition.
type Record struct {
	Offset uint64
	// Timestamp is the append time in Unix microseconds, shared by a batch.
	Timestamp uint64
	// OriginTimestamp is the producer's send time in Unix microseconds; Append
	// sets it to Timestamp when the caller leaves it zero.
	OriginTimestamp uint64
	// ID is the message id; Append assigns a fresh one when it is zero, as
	// Iggy does.
	ID [16]byte
	// Headers are the record's user headers, encoded as Iggy carries them.
	Headers wire.EncodedHeaders
	Payload []byte
}

// PartitionInfo describes one partition.
type PartitionInfo struct {
	ID uint32
	// CurrentOffset is the last offset, 0 for an empty partition as in Iggy.
	CurrentOffset uint64
	Messages      uint64
	// SizeBytes counts each record as Iggy's 64-byte header plus payload and
	// user headers.
	SizeBytes uint64
	CreatedAt uint64
}

type partition struct {
	id        uint32
	createdAt uint64
	records   []Record
	size      uint64
}

type offsetKey struct {
	consumer  string
	partition uint32
}

// Topic is one topic of a Log: its partitions, consumer groups and stored
// offsets, guarded by one mutex.
type Topic struct {
	log       *Log
	id        uint32
	name      string
	createdAt uint64

	mu          sync.Mutex
	deleted     bool
	parts       []*partition
	balanced    uint32
	groups      map[string]*Group
	groupsByID  map[uint32]*Group
	nextGroupID uint32
	offsets     map[offsetKey]uint64
	// changed is closed on the next change a poller may care about; it is
	// replaced only when someone took it, so unwatched appends allocate nothing.
	changed chan struct{}
	watched bool
}

func newTopic(l *Log, id uint32, name string, partitions uint32) *Topic {
	now := l.nowMicros()
	t := &Topic{
		log:        l,
		id:         id,
		name:       name,
		createdAt:  now,
		groups:     make(map[string]*Group),
		groupsByID: make(map[uint32]*Group),
		offsets:    make(map[offsetKey]uint64),
		changed:    make(chan struct{}),
	}
	t.addPartitionsLocked(partitions, now)
	return t
}

// ID returns the topic's numeric id.
func (t *Topic) ID() uint32 { return t.id }

// Name returns the topic name.
func (t *Topic) Name() string { return t.name }

// CreatedAt returns the creation time in Unix microseconds.
func (t *Topic) CreatedAt() uint64 { return t.createdAt }

// Partitions returns the partition count.
func (t *Topic) Partitions() uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return uint32(len(t.parts))
}

// Changed returns a channel that is closed at the next append, rebalance,
// partition change or deletion, so a waiter can re-check without sleeping:
// take the channel, check, then wait on it.
func (t *Topic) Changed() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.watched = true
	return t.changed
}

func (t *Topic) notifyLocked() {
	if !t.watched {
		return
	}
	close(t.changed)
	t.changed = make(chan struct{})
	t.watched = false
}

// liveLocked reports ErrNoTopic once the topic was deleted.
func (t *Topic) liveLocked() error {
	if t.deleted {
		return noTopic(t.name)
	}
	return nil
}

func (t *Topic) partitionLocked(p uint32) (*partition, error) {
	if err := t.liveLocked(); err != nil {
		return nil, err
	}
	if p >= uint32(len(t.parts)) {
		return nil, errorf(ErrNoPartition, "embedlog: topic %q has no partition %d (it has %d)", t.name, p, len(t.parts))
	}
	return t.parts[p], nil
}

func (t *Topic) markDeleted() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.deleted = true
	for _, g := range t.groups {
		g.deleted = true
	}
	t.notifyLocked()
}

// AddPartitions adds n partitions (the total stays within 1000) and
// rebalances every group.
func (t *Topic) AddPartitions(n uint32) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.liveLocked(); err != nil {
		return err
	}
	if n == 0 || uint64(n)+uint64(len(t.parts)) > MaxPartitions {
		return errorf(ErrBadPartitions, "embedlog: topic %q: adding %d partitions to %d, want a total of 1..%d", t.name, n, len(t.parts), MaxPartitions)
	}
	t.addPartitionsLocked(n, t.log.nowMicros())
	for _, g := range t.groups {
		g.rebalanceLocked()
	}
	t.notifyLocked()
	return nil
}

func (t *Topic) addPartitionsLocked(n uint32, now uint64) {
	for i := uint32(0); i < n; i++ {
		t.parts = append(t.parts, &partition{id: uint32(len(t.parts)), createdAt: now})
	}
}

// PartitionForKey returns where Iggy places a message with this key:
// xxHash32 (seed 0) of the key modulo the partition count.
func (t *Topic) PartitionForKey(key []byte) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return partitionForKey(key, uint32(len(t.parts)))
}

func partitionForKey(key []byte, partitions uint32) uint32 {
	if partitions == 0 {
		return 0
	}
	return xxh32.Sum32(key, 0) % partitions
}

// NextBalanced returns the next partition of the topic's round robin, the
// placement of a message sent without a key.
func (t *Topic) NextBalanced() uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.nextBalancedLocked()
}

func (t *Topic) nextBalancedLocked() uint32 {
	n := uint32(len(t.parts))
	if n == 0 {
		return 0
	}
	p := t.balanced % n
	t.balanced = p + 1
	return p
}

// Append adds recs to a partition as one batch: consecutive offsets and one
// timestamp. The records are copied, so callers may reuse their buffers.
func (t *Topic) Append(partition uint32, recs []Record) (first uint64, err error) {
	if len(recs) == 0 {
		return 0, errorf(ErrBadCount, "embedlog: topic %q: append of no records", t.name)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.partitionLocked(partition)
	if err != nil {
		return 0, err
	}
	first = uint64(len(p.records))
	var a arena
	for i := range recs {
		a.reserve(recs[i].Headers.Size(), len(recs[i].Payload))
	}
	a.alloc()
	ts := t.log.nowMicros()
	for _, r := range recs {
		r.Headers = a.headers(r.Headers)
		t.appendLocked(p, r, ts, &a)
	}
	t.notifyLocked()
	return first, nil
}

// appendLocked stores r, its payload copied into a (its headers are
// already there), with the next offset.
func (t *Topic) appendLocked(p *partition, r Record, ts uint64, a *arena) uint64 {
	r.Offset = uint64(len(p.records))
	r.Timestamp = ts
	if r.OriginTimestamp == 0 {
		r.OriginTimestamp = ts
	}
	if r.ID == ([16]byte{}) {
		r.ID = t.log.newID()
	}
	r.Payload = a.payload(r.Payload)
	p.records = append(p.records, r)
	p.size += uint64(messageHeaderBytes + len(r.Payload) + r.Headers.Size())
	return r.Offset
}

// Read returns up to max records of a partition from offset from on.
func (t *Topic) Read(partition uint32, from uint64, max int) ([]Record, error) {
	if max < 0 {
		return nil, errorf(ErrBadCount, "embedlog: read of %d records", max)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.partitionLocked(partition)
	if err != nil {
		return nil, err
	}
	return copyRecords(window(p.records, from, max)), nil
}

// ReadFromTimestamp returns up to max records of a partition, starting at the
// first whose timestamp is at or after ts (Unix µs).
func (t *Topic) ReadFromTimestamp(partition uint32, ts uint64, max int) ([]Record, error) {
	if max < 0 {
		return nil, errorf(ErrBadCount, "embedlog: read of %d records", max)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.partitionLocked(partition)
	if err != nil {
		return nil, err
	}
	// A linear scan stays right even if the clock ever stepped back.
	for i := range p.records {
		if p.records[i].Timestamp >= ts {
			return copyRecords(window(p.records, uint64(i), max)), nil
		}
	}
	return nil, nil
}

// window is the sub-slice of recs holding at most max records from offset from.
func window(recs []Record, from uint64, max int) []Record {
	n := uint64(len(recs))
	if from >= n || max == 0 {
		return nil
	}
	end := n
	if uint64(max) < n-from {
		end = from + uint64(max)
	}
	return recs[from:end]
}

// copyRecords copies records out so callers never alias the log's slices:
// payloads and encoded headers of all of them are copied into one
// allocation.
func copyRecords(src []Record) []Record {
	if len(src) == 0 {
		return nil
	}
	out := make([]Record, len(src))
	data := newByteArena(src)
	for i, r := range src {
		r.Headers = data.headers(r.Headers)
		r.Payload = data.copy(r.Payload)
		out[i] = r
	}
	return out
}

// byteArena hands out copies of byte slices from one allocation, so a batch
// of records read from the log costs one copy and never aliases the log: a
// handler that edits its body in place changes nothing for anyone else.
type byteArena []byte

// newByteArena sizes an arena for the payloads and headers of recs.
func newByteArena(recs []Record) byteArena { return make(byteArena, 0, arenaSize(recs)) }

// arenaSize is the bytes of recs' payloads and encoded headers.
func arenaSize(recs []Record) int {
	n := 0
	for i := range recs {
		n += len(recs[i].Payload) + recs[i].Headers.Size()
	}
	return n
}

// copy returns a copy of b, capped so an append cannot spill over the next.
func (a *byteArena) copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(*a)
	*a = append(*a, b...)
	return (*a)[start:len(*a):len(*a)]
}

// headers returns a copy of h carved from the arena.
func (a *byteArena) headers(h wire.EncodedHeaders) wire.EncodedHeaders {
	var out wire.EncodedHeaders
	*a, out = h.AppendTo(*a)
	return out
}

// PartitionInfo describes a partition.
func (t *Topic) PartitionInfo(partition uint32) (PartitionInfo, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.partitionLocked(partition)
	if err != nil {
		return PartitionInfo{}, err
	}
	info := PartitionInfo{ID: p.id, Messages: uint64(len(p.records)), SizeBytes: p.size, CreatedAt: p.createdAt}
	if n := len(p.records); n > 0 {
		info.CurrentOffset = uint64(n - 1)
	}
	return info, nil
}

// StoreOffset stores offset as consumer's position on a partition; like Iggy
// it refuses an empty partition or an offset past the last record.
func (t *Topic) StoreOffset(consumer string, partition uint32, offset uint64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.storeOffsetLocked(consumer, partition, offset)
}

func (t *Topic) storeOffsetLocked(consumer string, partition uint32, offset uint64) error {
	p, err := t.partitionLocked(partition)
	if err != nil {
		return err
	}
	if n := uint64(len(p.records)); n == 0 || offset >= n {
		return errorf(ErrInvalidOffset, "embedlog: topic %q partition %d: offset %d is past the last record (partition holds %d)", t.name, partition, offset, n)
	}
	t.offsets[offsetKey{consumer, partition}] = offset
	return nil
}

// StoredOffset returns consumer's stored offset on a partition.
func (t *Topic) StoredOffset(consumer string, partition uint32) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.deleted {
		return 0, false
	}
	off, ok := t.offsets[offsetKey{consumer, partition}]
	return off, ok
}

// DeleteOffset forgets consumer's stored offset on a partition.
func (t *Topic) DeleteOffset(consumer string, partition uint32) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.partitionLocked(partition); err != nil {
		return err
	}
	k := offsetKey{consumer, partition}
	if _, ok := t.offsets[k]; !ok {
		return errorf(ErrNoOffset, "embedlog: topic %q partition %d: no offset stored for this consumer", t.name, partition)
	}
	delete(t.offsets, k)
	return nil
}

// arena carves the copies of one batch from two allocations (payload
// bytes, encoded headers) instead of one or more per record.
type arena struct {
	payloadN, headerN int
	payloads, data    []byte
}

func (a *arena) reserve(headerBytes, payload int) {
	a.payloadN += payload
	a.headerN += headerBytes
}

func (a *arena) alloc() {
	if a.payloadN > 0 {
		a.payloads = make([]byte, 0, a.payloadN)
	}
	if a.headerN > 0 {
		a.data = make([]byte, 0, a.headerN)
	}
}

func (a *arena) payload(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	start := len(a.payloads)
	a.payloads = append(a.payloads, b...)
	return a.payloads[start:len(a.payloads):len(a.payloads)]
}

// headers stores a copy of encoded headers.
func (a *arena) headers(h wire.EncodedHeaders) wire.EncodedHeaders {
	var out wire.EncodedHeaders
	a.data, out = h.AppendTo(a.data)
	return out
}

// encodeHeaders encodes a list of headers into the arena, refusing what
// Iggy would refuse.
func (a *arena) encodeHeaders(h wire.Headers) (wire.EncodedHeaders, error) {
	var out wire.EncodedHeaders
	var err error
	a.data, out, err = h.AppendEncoded(a.data)
	return out, err
}
