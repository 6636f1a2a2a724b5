package conversation

import (
	"context"
	"sync"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// SnapshotTopic is the topic TopicSnapshots uses by default.
const SnapshotTopic = "agent.snapshots"

// snapshotScan is how many records one backward step of TopicSnapshots reads.
const snapshotScan = 256

// SnapshotStore keeps fold snapshots, so a long conversation resumes from
// its last checkpoint instead of replaying every record.
type SnapshotStore interface {
	// Latest returns the conversation's newest snapshot, or nil when it has
	// none.
	Latest(ctx context.Context, conv wire.ID) (*wire.FoldSnapshot, error)
	// Save stores snap as its conversation's newest snapshot.
	Save(ctx context.Context, snap *wire.FoldSnapshot) error
}

// MemorySnapshots keeps snapshots in process memory, for tests and for
// state that may be rebuilt from the log after a restart.
type MemorySnapshots struct {
	mu   sync.Mutex
	byID map[wire.ID]*wire.FoldSnapshot
}

// NewMemorySnapshots returns an empty in-process store.
func NewMemorySnapshots() *MemorySnapshots {
	return &MemorySnapshots{byID: make(map[wire.ID]*wire.FoldSnapshot)}
}

// Latest returns the last snapshot saved for conv, or nil.
func (s *MemorySnapshots) Latest(_ context.Context, conv wire.ID) (*wire.FoldSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byID[conv], nil
}

// Save stores snap.
func (s *MemorySnapshots) Save(_ context.Context, snap *wire.FoldSnapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[snap.Conversation] = snap
	return nil
}

// TopicSnapshots keeps snapshots as records on a topic (SnapshotTopic by
// default) keyed by conversation, encoded as the reference encodes them, so
// they survive restarts and work on plain Iggy. The topic must exist
// (client.Bootstrap(ctx, n, conversation.SnapshotTopic) creates it).
//
// Latest walks the partitions in turn, each backward from its tail, and
// returns the conversation's newest record in the first partition holding
// any: every snapshot of a conversation shares its key and so its
// partition, which is authoritative. A conversation never snapshotted walks
// the whole topic, so keep the topic on a retention policy.
type TopicSnapshots struct {
	t     runtime.Transport
	topic string
}

// NewTopicSnapshots returns a store on topic ("" means SnapshotTopic).
func NewTopicSnapshots(t runtime.Transport, topic string) *TopicSnapshots {
	if topic == "" {
		topic = SnapshotTopic
	}
	return &TopicSnapshots{t: t, topic: topic}
}

// Save publishes snap keyed by its conversation.
func (s *TopicSnapshots) Save(ctx context.Context, snap *wire.FoldSnapshot) error {
	payload, err := snap.Marshal()
	if err != nil {
		return err
	}
	_, err = s.t.Publish(ctx, s.topic, runtime.Outgoing{Key: wire.PartitionKey(snap.Conversation), Payload: payload})
	return err
}

// Latest returns the newest snapshot of conv on the topic, or nil.
func (s *TopicSnapshots) Latest(ctx context.Context, conv wire.ID) (*wire.FoldSnapshot, error) {
	n, err := s.t.Partitions(ctx, s.topic)
	if err != nil {
		return nil, err
	}
	for p := range min(n, maxPartitions) {
		end, err := s.t.NextOffset(ctx, s.topic, p)
		if err != nil {
			return nil, err
		}
		for end > 0 {
			start := end - min(end, snapshotScan)
			recs, err := s.t.ReadRange(ctx, s.topic, p, start, int(end-start))
			if err != nil {
				return nil, err
			}
			for i := len(recs) - 1; i >= 0; i-- {
				if recs[i].Offset >= end {
					continue
				}
				snap, err := wire.DecodeFoldSnapshot(recs[i].Payload)
				if err == nil && snap.Conversation == conv {
					return snap, nil
				}
			}
			end = start
		}
	}
	return nil, nil
}
