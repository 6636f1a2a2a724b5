package conversation

import (
	"context"
	"fmt"
	"sync"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
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
//
// A snapshot on a topic is only as trustworthy as the topic's writers, and
// a forged one seeds the fold with any state. WithTrust signs what Save
// publishes and makes Latest skip what does not verify.
type TopicSnapshots struct {
	t     runtime.Transport
	topic string
	trust SnapshotTrust
}

// SnapshotTrust signs and verifies the snapshots of a TopicSnapshots store.
type SnapshotTrust struct {
	// Agent is the source snapshots are signed as, the principal of Key
	// (or one allowed to send as it). Required with Key.
	Agent string
	// Key, when set, makes Save publish each snapshot as the body of a
	// signed AGDX event bound to the topic (sign.Bind), rather than as the
	// reference's bare snapshot encoding.
	Key *sign.Key
	// Verifier, when set, makes Latest return only snapshots carried in an
	// AGDX event that verifies (runtime.Message.Verify), skipping bare and
	// forged ones as if they were absent.
	Verifier runtime.Verifier
	// Clock and IDs stamp and name signed snapshots. Default the system
	// clock and ULIDs.
	Clock clock.Clock
	IDs   clock.IDSource
}

// WithTrust returns the store signing and verifying its snapshots as trust
// says.
func (s *TopicSnapshots) WithTrust(trust SnapshotTrust) *TopicSnapshots {
	if trust.Clock == nil {
		trust.Clock = clock.System{}
	}
	if trust.IDs == nil {
		trust.IDs = clock.ULIDSource{Clock: trust.Clock}
	}
	return &TopicSnapshots{t: s.t, topic: s.topic, trust: trust}
}

// NewTopicSnapshots returns a store on topic ("" means SnapshotTopic).
func NewTopicSnapshots(t runtime.Transport, topic string) *TopicSnapshots {
	if topic == "" {
		topic = SnapshotTopic
	}
	return &TopicSnapshots{t: t, topic: topic}
}

// Save publishes snap keyed by its conversation, signed when the store's
// trust has a key.
func (s *TopicSnapshots) Save(ctx context.Context, snap *wire.FoldSnapshot) error {
	payload, err := snap.Marshal()
	if err != nil {
		return err
	}
	out := runtime.Outgoing{Key: wire.PartitionKey(snap.Conversation), Payload: payload}
	if s.trust.Key != nil {
		if out, err = s.signed(snap.Conversation, payload); err != nil {
			return err
		}
	}
	_, err = s.t.Publish(ctx, s.topic, out)
	return err
}

// signed wraps a snapshot's encoding in an AGDX event signed by the
// store's key, bound to its topic and the time.
func (s *TopicSnapshots) signed(conv wire.ID, snapshot []byte) (runtime.Outgoing, error) {
	source, err := wire.ParseAgentID(s.trust.Agent)
	if err != nil {
		return runtime.Outgoing{}, fmt.Errorf("conversation: snapshot signer: %w", err)
	}
	id := s.trust.IDs.NewID()
	env := &wire.Envelope{Kind: wire.KindEvent, Record: &id, Conversation: conv, Source: source, Body: snapshot}
	sign.Bind(env, s.topic, uint64(s.trust.Clock.Now().UnixMicro()))
	code, av := uint8(wire.ContentCBOR), wire.AgentOpVersion
	if err := s.trust.Key.Sign(env, &wire.SignatureContext{ContentType: &code, AgentVersion: &av}); err != nil {
		return runtime.Outgoing{}, fmt.Errorf("conversation: sign snapshot: %w", err)
	}
	payload, err := env.Marshal()
	if err != nil {
		return runtime.Outgoing{}, fmt.Errorf("conversation: encode snapshot envelope: %w", err)
	}
	return runtime.Outgoing{Key: wire.PartitionKey(conv), Headers: wire.EnvelopeHeaders(env, wire.ContentCBOR), Payload: payload}, nil
}

// decode returns the snapshot a record carries: the bare reference
// encoding, or the body of an AGDX event; under a verifier only a verified
// event counts.
func (s *TopicSnapshots) decode(rec *runtime.Incoming) (*wire.FoldSnapshot, bool) {
	if s.trust.Verifier == nil {
		if snap, err := wire.DecodeFoldSnapshot(rec.Payload); err == nil {
			return snap, true
		}
	}
	m, err := runtime.DecodeRecord(s.topic, rec, 0)
	if err != nil || m.Envelope == nil || m.Envelope.Kind != wire.KindEvent {
		return nil, false
	}
	if s.trust.Verifier != nil {
		if _, err := m.Verify(s.trust.Verifier); err != nil {
			return nil, false
		}
	}
	snap, err := wire.DecodeFoldSnapshot(m.Envelope.Body)
	if err != nil || snap.Conversation != m.Envelope.Conversation {
		return nil, false
	}
	return snap, true
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
				if snap, ok := s.decode(&recs[i]); ok && snap.Conversation == conv {
					return snap, nil
				}
			}
			end = start
		}
	}
	return nil, nil
}
