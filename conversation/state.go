package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// ReplayBound says how much of a conversation a fold replays. There is no
// default: a long conversation is a long partition, so replaying all of it
// is something the caller writes out (Full), never something that happens.
type ReplayBound struct {
	kind    boundKind
	offsets map[uint32]uint64
	n       int
}

type boundKind uint8

const (
	boundNone boundKind = iota
	boundFromOffsets
	boundLast
	boundFull
)

// FromOffsets replays partition p from offsets[p] (0 for a partition not
// listed), the incremental form: a persisted cursor, a snapshot's resume
// offsets. Keyed by partition only and shared across topics, as in the
// reference, so exact for a single topic. A listed offset older than the
// partition's read window (Window records before its tail) fails the load
// with ErrBeyondWindow rather than silently skipping the records between.
func FromOffsets(offsets map[uint32]uint64) ReplayBound {
	return ReplayBound{kind: boundFromOffsets, offsets: maps.Clone(offsets)}
}

// Last replays the last n records of the conversation found in each
// partition's read window.
func Last(n int) ReplayBound { return ReplayBound{kind: boundLast, n: n} }

// Full replays the whole conversation, which is still bounded by each
// partition's read window of Window records.
func Full() ReplayBound { return ReplayBound{kind: boundFull} }

// ErrNoReplayBound reports a fold asked to load without a replay bound.
var ErrNoReplayBound = errors.New("conversation: a replay bound is required (FromOffsets, Last or Full)")

// ErrSnapshotTopics reports LoadWith or Checkpoint on a fold of other than
// exactly one topic: a snapshot keys its offsets by partition only (as the
// reference's does), so with two topics each would resume at the other's
// offset and records would be skipped.
var ErrSnapshotTopics = errors.New("conversation: snapshots need a fold of exactly one topic (set Fold.Topics)")

// ErrBeyondWindow reports a FromOffsets start older than the partition's
// read window: the records between it and the window cannot be read.
var ErrBeyondWindow = errors.New("conversation: the replay start is older than the read window")

// Fold rebuilds a typed state from a conversation's records (event
// sourcing). Loading commits nothing, so loading twice folds the same
// records twice from Init.
type Fold[S any] struct {
	// Topics to replay. Default DefaultTopics. LoadWith and Checkpoint
	// need exactly one.
	Topics []string
	// Init is the state before the first record.
	Init S
	// Step folds one record into the state.
	Step func(S, *runtime.Message) S
	// UnderstoodFeatures as in Options.
	UnderstoodFeatures uint64
}

// Load folds the conversation's records under bound, starting from Init.
func (f Fold[S]) Load(ctx context.Context, t runtime.Transport, conv wire.ID, bound ReplayBound) (S, error) {
	s, _, err := f.load(ctx, t, conv, bound, f.Init)
	return s, err
}

func (f Fold[S]) load(ctx context.Context, t runtime.Transport, conv wire.ID, bound ReplayBound, seed S) (S, map[uint32]uint64, error) {
	// A fold replays its window whatever its size (it is the state), so it
	// has no byte budget; Last(n) still keeps only n per partition.
	opts := Options{Topics: f.Topics, UnderstoodFeatures: f.UnderstoodFeatures, MaxBytes: -1}
	var policy Policy = LastN(math.MaxInt)
	switch bound.kind {
	case boundFromOffsets:
		opts.FromOffsets, opts.exactFrom = bound.offsets, true
	case boundLast:
		policy = LastN(bound.n)
	case boundFull:
	default:
		return seed, nil, ErrNoReplayBound
	}
	h, asOf, err := read(ctx, t, conv, &opts, policy)
	if err != nil {
		return seed, nil, err
	}
	s := seed
	for _, m := range policy.Select(h) {
		s = f.Step(s, m)
	}
	return s, asOf, nil
}

// LoadWith seeds the fold from the conversation's newest snapshot in store
// (its State decoded as JSON into S) and replays from one past each
// partition's snapshotted offset; with no snapshot it folds Full from Init.
// The fold must list exactly one topic (ErrSnapshotTopics otherwise), and a
// snapshot older than the read window fails with ErrBeyondWindow.
func (f Fold[S]) LoadWith(ctx context.Context, t runtime.Transport, store SnapshotStore, conv wire.ID) (S, error) {
	s, _, err := f.loadWith(ctx, t, store, conv)
	return s, err
}

func (f Fold[S]) loadWith(ctx context.Context, t runtime.Transport, store SnapshotStore, conv wire.ID) (S, map[uint32]uint64, error) {
	if topics := (&Options{Topics: f.Topics}).topics(); len(topics) != 1 {
		return f.Init, nil, fmt.Errorf("%w: it lists %d", ErrSnapshotTopics, len(topics))
	}
	snap, err := store.Latest(ctx, conv)
	if err != nil {
		return f.Init, nil, fmt.Errorf("conversation: latest snapshot: %w", err)
	}
	if snap == nil {
		return f.load(ctx, t, conv, Full(), f.Init)
	}
	if snap.Conversation != conv {
		return f.Init, nil, fmt.Errorf("conversation: snapshot of %s returned for %s", snap.Conversation, conv)
	}
	var seed S
	if err := json.Unmarshal(snap.State, &seed); err != nil {
		return f.Init, nil, fmt.Errorf("conversation: decode snapshot state: %w", err)
	}
	s, asOf, err := f.load(ctx, t, conv, FromOffsets(resumeOffsets(snap)), seed)
	if err != nil {
		return s, nil, err
	}
	// A partition with nothing new keeps its snapshotted position.
	for p, off := range snap.AsOf {
		if _, ok := asOf[p]; !ok {
			asOf[p] = off
		}
	}
	return s, asOf, nil
}

// Checkpoint loads the state as LoadWith does and saves it to store as the
// conversation's newest snapshot, as of the last offset read on each
// partition, so the next LoadWith replays only what comes after. The fold
// must list exactly one topic (ErrSnapshotTopics otherwise).
func (f Fold[S]) Checkpoint(ctx context.Context, t runtime.Transport, store SnapshotStore, conv wire.ID) (S, error) {
	s, asOf, err := f.loadWith(ctx, t, store, conv)
	if err != nil {
		return s, err
	}
	state, err := json.Marshal(s)
	if err != nil {
		return s, fmt.Errorf("conversation: encode snapshot state: %w", err)
	}
	if err := store.Save(ctx, &wire.FoldSnapshot{Conversation: conv, AsOf: asOf, State: state}); err != nil {
		return s, fmt.Errorf("conversation: save snapshot: %w", err)
	}
	return s, nil
}

// resumeOffsets returns where a fold seeded from snap resumes: one past each
// partition's last folded offset.
func resumeOffsets(snap *wire.FoldSnapshot) map[uint32]uint64 {
	out := make(map[uint32]uint64, len(snap.AsOf))
	for p := range snap.AsOf {
		out[p] = snap.ResumeOffset(p)
	}
	return out
}
