package runtime

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/wire"
)

// Transport is the seam between the runtime and a log: the embedded
// in-process log (package embedlog) and Apache Iggy (package iggy) implement it,
// and the reliable consumer, producers and reply readers use nothing else.
//
// Every method is safe for concurrent use. A failed operation is an *Error
// of CodeTransport whose Msg names the operation ("poll", "publish
// agent.dlq"); one that a retry may cure (a dropped connection, a server
// that is restarting) has Retryable set or wraps ErrTransient, and so
// matches ErrTransient (errors.Is).
type Transport interface {
	// EnsureTopics creates the stream and the named topics with the given
	// partition count when they are missing; existing topics are left alone.
	EnsureTopics(ctx context.Context, partitions uint32, topics ...string) error

	// Publish appends records to topic, each placed by its partition key, and
	// returns where each landed, in order. Finding the positions may cost
	// extra (on Iggy a read-back per partition); Append skips it.
	Publish(ctx context.Context, topic string, records ...Outgoing) ([]Position, error)

	// Join makes the caller a member of group on topic; the group is created
	// when missing. Partitions are split among the members of a group.
	Join(ctx context.Context, topic, group string) (Subscription, error)

	// StoredOffset returns the group's committed offset for a partition; ok is
	// false when the group has stored nothing there.
	StoredOffset(ctx context.Context, topic, group string, partition uint32) (offset uint64, ok bool, err error)

	// ReadRange reads up to count records of one partition from offset on,
	// without a group and without committing anything.
	ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]Incoming, error)

	// NextOffset returns the offset the next record appended to a partition
	// will get (0 for an empty partition); reply readers start there so they
	// see only what is published after they were set up.
	NextOffset(ctx context.Context, topic string, partition uint32) (uint64, error)

	// Partitions returns the topic's partition count.
	Partitions(ctx context.Context, topic string) (uint32, error)

	// TopicIDs resolves the numeric stream and topic ids that dead-letter
	// capsules carry in their log positions.
	TopicIDs(ctx context.Context, topic string) (streamID, topicID uint32, err error)
}

// Subscription is one member's view of a consumer group.
//
// A subscription that can tell an idle consumer that records may have
// arrived (the embedded log's does) is also a ChangeNotifier.
type Subscription interface {
	// Poll returns the next batch of at most max records from the partitions
	// this member owns, never auto-committing. An empty batch means nothing
	// is ready; Poll does not block waiting for records.
	Poll(ctx context.Context, max int) ([]Incoming, error)

	// Commit stores offset as the group's consumed position for partition.
	// A partition the member no longer owns fails with ErrPartitionLost.
	Commit(ctx context.Context, partition uint32, offset uint64) error

	// Leave removes the member from its group so the remaining members take
	// its partitions; call it only after every polled record was handled.
	Leave(ctx context.Context) error

	// Close drops the membership the way a crashed process would: no leave,
	// nothing committed.
	Close() error
}

// Outgoing is a record to publish.
type Outgoing struct {
	// Key places the record: records with equal keys share a partition.
	// Empty means the transport balances records over partitions.
	Key     string
	Headers wire.Headers
	Payload []byte
}

// Position is where a record sits in its topic.
type Position struct {
	Partition uint32
	Offset    uint64
}

// String renders the position as "partition:offset", the causal-parent form.
func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Partition, p.Offset) }

// Incoming is a record read from the log.
type Incoming struct {
	Position
	// Timestamp is the broker's append time in Unix microseconds.
	Timestamp uint64
	// Headers are the record's user headers, read where the poll put them.
	Headers wire.EncodedHeaders
	Payload []byte
}

// Size is the byte count the scheduler's queue bound charges for the record.
func (r *Incoming) Size() int { return len(r.Payload) + r.Headers.Size() }
