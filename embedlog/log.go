// Package embedlog is an embedded in-process log: one named stream of topics
// and partitions with Iggy's placement rules, consumer groups and stored
// offsets. It is the zero-setup runtime.Transport.
//
// Everything lives in memory only: nothing is persisted, and a Log is not
// shared across processes or replicas.
package embedlog

import (
	"context"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/runtime"
)

// MaxPartitions is the most partitions a topic may have, Iggy's limit.
const MaxPartitions = logstore.MaxPartitions

// Errors callers branch on (errors.Is). None of them is transient: each
// means the request names something that does not exist or is not allowed.
var (
	ErrNoTopic       = logstore.ErrNoTopic       // the topic does not exist
	ErrBadPartitions = logstore.ErrBadPartitions // a partition count outside 1..MaxPartitions
	ErrNoPartition   = logstore.ErrNoPartition   // the partition does not exist
	ErrNotMember     = logstore.ErrNotMember     // the subscription left its group or was removed from it
	ErrNotOwner      = logstore.ErrNotOwner      // the member no longer owns the partition; matches runtime.ErrPartitionLost
	ErrInvalidOffset = logstore.ErrInvalidOffset // a committed offset past the partition's last record
	ErrBadName       = logstore.ErrBadName       // a stream, topic or group name outside 1..255 bytes
	ErrBadCount      = logstore.ErrBadCount      // a poll or read of fewer than 1 record
)

// Config configures a Log; the zero value is usable.
type Config struct {
	// Clock stamps appended batches (Unix µs). Default clock.System.
	Clock clock.Clock
	// StreamID is the numeric stream id that TopicIDs reports. Default 0,
	// Iggy's first stream id.
	StreamID uint32
	// DefaultPartitions is the partition count EnsureTopics uses when it is
	// asked for 0 partitions. Default 1; values outside 1..1000 are ignored.
	DefaultPartitions uint32
}

// Log is one named stream of topics, safe for concurrent use.
type Log struct {
	l *logstore.Log
}

var _ runtime.Transport = (*Log)(nil)

// New returns an empty log holding the stream named stream, configured by
// cfg (embedlog.Config{} for the defaults).
func New(stream string, cfg Config) *Log {
	engine := []logstore.Option{logstore.WithStreamID(cfg.StreamID)}
	if cfg.Clock != nil {
		engine = append(engine, logstore.WithClock(cfg.Clock))
	}
	if cfg.DefaultPartitions != 0 {
		engine = append(engine, logstore.WithDefaultPartitions(cfg.DefaultPartitions))
	}
	return &Log{l: logstore.New(stream, engine...)}
}

// Stream returns the stream name.
func (l *Log) Stream() string { return l.l.Stream() }

// EnsureTopics creates the missing topics with the given partition count (0
// means Config.DefaultPartitions); existing topics are left alone.
func (l *Log) EnsureTopics(ctx context.Context, partitions uint32, topics ...string) error {
	return l.l.EnsureTopics(ctx, partitions, topics...)
}

// Publish appends records to an existing topic: a keyed record goes to
// xxHash32(key) mod partitions, an unkeyed one to the next balanced
// partition. One call is one batch: a single timestamp, the records sharing
// a partition get consecutive offsets, and the topic's lock is taken once
// for all of them, after their headers were encoded outside it.
func (l *Log) Publish(ctx context.Context, topic string, records ...runtime.Outgoing) ([]runtime.Position, error) {
	return l.l.Publish(ctx, topic, records...)
}

// Join makes a fresh member of group (created when missing) on an existing
// topic.
func (l *Log) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	return l.l.Join(ctx, topic, group)
}

// StoredOffset returns the group's committed offset on a partition, and
// whether it has one.
func (l *Log) StoredOffset(ctx context.Context, topic, group string, partition uint32) (uint64, bool, error) {
	return l.l.StoredOffset(ctx, topic, group, partition)
}

// ReadRange reads up to count records of a partition from offset on.
func (l *Log) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	return l.l.ReadRange(ctx, topic, partition, offset, count)
}

// NextOffset returns the offset the next record appended to a partition
// gets: the partition's record count.
func (l *Log) NextOffset(ctx context.Context, topic string, partition uint32) (uint64, error) {
	return l.l.NextOffset(ctx, topic, partition)
}

// Partitions returns the partition count of topic.
func (l *Log) Partitions(ctx context.Context, topic string) (uint32, error) {
	return l.l.Partitions(ctx, topic)
}

// TopicIDs returns the stream id and the topic's id.
func (l *Log) TopicIDs(ctx context.Context, topic string) (uint32, uint32, error) {
	return l.l.TopicIDs(ctx, topic)
}

// DeleteTopic removes a topic with its records, groups and offsets; its
// subscriptions get ErrNoTopic from then on.
func (l *Log) DeleteTopic(name string) error { return l.l.DeleteTopic(name) }
