package logstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// transportMemberBit marks member ids minted by Join, so they never collide
// with ids below 2^63 that other users of the same Log (the Iggy test
// server's client ids) pick.
const transportMemberBit = 1 << 63

// EnsureTopics creates the missing topics with the given partition count (0
// means the WithDefaultPartitions count); existing topics are left alone.
func (l *Log) EnsureTopics(ctx context.Context, partitions uint32, topics ...string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("embedlog: ensure topics: %w", err)
	}
	if partitions == 0 {
		partitions = l.cfg.defaultPartitions
	}
	for _, name := range topics {
		if _, ok := l.Topic(name); ok {
			continue
		}
		if _, err := l.CreateTopic(name, partitions); err != nil && !errors.Is(err, ErrTopicExists) {
			return err
		}
	}
	return nil
}

// Publish appends records to an existing topic: a keyed record goes to
// xxHash32(key) mod partitions, an unkeyed one to the next balanced
// partition. One call is one batch: a single timestamp, and the records
// sharing a partition get consecutive offsets.
func (l *Log) Publish(ctx context.Context, topic string, records ...runtime.Outgoing) ([]runtime.Position, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedlog: publish %q: %w", topic, err)
	}
	t, err := l.topic(topic)
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, nil
	}
	var a arena
	for i := range records {
		a.reserve(records[i].Headers.EncodedLen(), len(records[i].Payload))
	}
	a.alloc()
	// Headers are encoded before the lock, so a record Iggy would refuse
	// fails the whole batch and nothing lands.
	encoded := make([]wire.EncodedHeaders, len(records))
	for i := range records {
		if encoded[i], err = a.encodeHeaders(records[i].Headers); err != nil {
			return nil, fmt.Errorf("embedlog: publish %q: record %d: %w", topic, i, err)
		}
	}
	pos := make([]runtime.Position, len(records))

	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.liveLocked(); err != nil {
		return nil, err
	}
	n := uint32(len(t.parts))
	ts := l.nowMicros()
	for i := range records {
		r := &records[i]
		var p uint32
		if r.Key != "" {
			p = partitionForKey([]byte(r.Key), n)
		} else {
			p = t.nextBalancedLocked()
		}
		off := t.appendLocked(t.parts[p], Record{Headers: encoded[i], Payload: r.Payload}, ts, &a)
		pos[i] = runtime.Position{Partition: p, Offset: off}
	}
	t.notifyLocked()
	return pos, nil
}

// Join makes a fresh member of group (created when missing) on an existing
// topic.
func (l *Log) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedlog: join %q/%q: %w", topic, group, err)
	}
	if err := checkName("consumer group", group); err != nil {
		return nil, err
	}
	t, err := l.topic(topic)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.liveLocked(); err != nil {
		return nil, err
	}
	g, ok := t.groups[group]
	if !ok {
		g = t.createGroupLocked(group)
	}
	member := transportMemberBit | l.memberSeq.Add(1)
	if err := g.joinLocked(member); err != nil {
		return nil, err
	}
	return &Subscription{topic: t, group: g, member: member, cursors: make(map[uint32]cursor)}, nil
}

// StoredOffset returns the group's committed offset on a partition.
func (l *Log) StoredOffset(ctx context.Context, topic, group string, partition uint32) (uint64, bool, error) {
	if err := ctx.Err(); err != nil {
		return 0, false, fmt.Errorf("embedlog: stored offset %q/%q: %w", topic, group, err)
	}
	t, err := l.topic(topic)
	if err != nil {
		return 0, false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.partitionLocked(partition); err != nil {
		return 0, false, err
	}
	off, ok := t.offsets[offsetKey{GroupConsumerKey(group), partition}]
	return off, ok, nil
}

// ReadRange reads up to count records of a partition from offset on.
func (l *Log) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedlog: read %q: %w", topic, err)
	}
	if count < 0 {
		return nil, errorf(ErrBadCount, "embedlog: read of %d records", count)
	}
	t, err := l.topic(topic)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.partitionLocked(partition)
	if err != nil {
		return nil, err
	}
	w := window(p.records, offset, count)
	if len(w) == 0 {
		return nil, nil
	}
	out := make([]runtime.Incoming, 0, len(w))
	data := newByteArena(w)
	out = appendIncoming(out, &data, partition, w)
	return out, nil
}

// NextOffset returns the offset the next record appended to a partition
// gets: the partition's record count.
func (l *Log) NextOffset(ctx context.Context, topic string, partition uint32) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("embedlog: next offset %q: %w", topic, err)
	}
	t, err := l.topic(topic)
	if err != nil {
		return 0, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := t.partitionLocked(partition)
	if err != nil {
		return 0, err
	}
	return uint64(len(p.records)), nil
}

// Partitions returns the topic's partition count.
func (l *Log) Partitions(ctx context.Context, topic string) (uint32, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("embedlog: partitions %q: %w", topic, err)
	}
	t, err := l.topic(topic)
	if err != nil {
		return 0, err
	}
	return t.Partitions(), nil
}

// TopicIDs returns the stream id and the topic's id.
func (l *Log) TopicIDs(ctx context.Context, topic string) (uint32, uint32, error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, fmt.Errorf("embedlog: topic ids %q: %w", topic, err)
	}
	t, err := l.topic(topic)
	if err != nil {
		return 0, 0, err
	}
	return l.cfg.streamID, t.id, nil
}

// appendIncoming converts records of one partition, copying payloads and
// headers into data.
func appendIncoming(out []runtime.Incoming, data *byteArena, partition uint32, recs []Record) []runtime.Incoming {
	for i := range recs {
		r := &recs[i]
		out = append(out, runtime.Incoming{
			Position:  runtime.Position{Partition: partition, Offset: r.Offset},
			Timestamp: r.Timestamp,
			Headers:   data.headers(r.Headers),
			Payload:   data.copy(r.Payload),
		})
	}
	return out
}
