package featuretest

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// tally is a folded state: the sum of the numeric bodies and how many
// records went into it.
type tally struct {
	Sum   int `json:"sum"`
	Count int `json:"count"`
}

// tallyFold folds numeric bodies; steps counts the Step calls.
func tallyFold(topic string, steps *int) conversation.Fold[tally] {
	return conversation.Fold[tally]{
		Topics: []string{topic},
		Step: func(s tally, m *runtime.Message) tally {
			*steps++
			n, _ := strconv.Atoi(string(m.Body()))
			return tally{Sum: s.Sum + n, Count: s.Count + 1}
		},
	}
}

// events publishes the bodies from..to of conv and returns their positions.
func (w *conversationWorld) events(topic string, conv wire.ID, from, to int) []runtime.Position {
	var pos []runtime.Position
	for i := from; i <= to; i++ {
		pos = append(pos, w.say(topic, conv, "ledger", fmt.Sprint(i)))
	}
	return pos
}

func conversationFoldFull(w *conversationWorld) {
	topic := w.topic("full", 2)
	conv := w.conv()
	w.events(topic, conv, 1, 5)
	w.say(topic, w.conv(), "ledger", "100")
	var steps int
	f := tallyFold(topic, &steps)
	for range 2 { // replay commits nothing: the second load folds the same five
		s, err := f.Load(w.ctx, w.tr, conv, conversation.Full())
		if err != nil || s != (tally{Sum: 15, Count: 5}) {
			w.t.Fatalf("full replay %+v, %v", s, err)
		}
	}
}

func conversationFoldLast(w *conversationWorld) {
	topic := w.topic("last", 2)
	conv := w.conv()
	w.events(topic, conv, 1, 5)
	var steps int
	s, err := tallyFold(topic, &steps).Load(w.ctx, w.tr, conv, conversation.Last(2))
	if err != nil || s != (tally{Sum: 9, Count: 2}) {
		w.t.Fatalf("last 2: %+v, %v", s, err)
	}
}

func conversationFoldFromOffsets(w *conversationWorld) {
	topic := w.topic("fromoff", 1)
	conv := w.conv()
	pos := w.events(topic, conv, 1, 5)
	var steps int
	s, err := tallyFold(topic, &steps).Load(w.ctx, w.tr, conv, conversation.FromOffsets(map[uint32]uint64{pos[2].Partition: pos[2].Offset}))
	if err != nil || s != (tally{Sum: 12, Count: 3}) {
		w.t.Fatalf("from offset %d: %+v, %v", pos[2].Offset, s, err)
	}
}

func conversationFoldNoBound(w *conversationWorld) {
	topic := w.topic("nobound", 1)
	var steps int
	if _, err := tallyFold(topic, &steps).Load(w.ctx, w.tr, w.conv(), conversation.ReplayBound{}); !errors.Is(err, conversation.ErrNoReplayBound) {
		w.t.Fatalf("load without a bound: %v", err)
	}
}

// snapshotScenario checkpoints five events, appends three, and loads with
// the store: the state includes all eight but only three are folded.
func snapshotScenario(w *conversationWorld, topic string, store func() conversation.SnapshotStore) {
	conv := w.conv()
	w.events(topic, conv, 1, 5)
	var steps int
	f := tallyFold(topic, &steps)
	if s, err := f.LoadWith(w.ctx, w.tr, store(), conv); err != nil || s != (tally{15, 5}) || steps != 5 {
		w.t.Fatalf("first load without a snapshot: %+v after %d steps, %v", s, steps, err)
	}
	steps = 0
	if s, err := f.Checkpoint(w.ctx, w.tr, store(), conv); err != nil || s != (tally{15, 5}) {
		w.t.Fatalf("checkpoint: %+v, %v", s, err)
	}
	snap, err := store().Latest(w.ctx, conv)
	if err != nil || snap == nil || snap.Conversation != conv || string(snap.State) != `{"sum":15,"count":5}` {
		w.t.Fatalf("saved snapshot %+v, %v", snap, err)
	}
	w.events(topic, conv, 6, 8)
	steps = 0
	s, err := f.LoadWith(w.ctx, w.tr, store(), conv)
	if err != nil || s != (tally{Sum: 36, Count: 8}) || steps != 3 {
		w.t.Fatalf("load from the snapshot: %+v after %d steps (want 3), %v", s, steps, err)
	}
	// A second checkpoint with nothing new keeps the partition's position.
	steps = 0
	if _, err := f.Checkpoint(w.ctx, w.tr, store(), conv); err != nil {
		w.t.Fatal(err)
	}
	steps = 0
	if s, err := f.LoadWith(w.ctx, w.tr, store(), conv); err != nil || s != (tally{36, 8}) || steps != 0 {
		w.t.Fatalf("load after the second checkpoint: %+v after %d steps, %v", s, steps, err)
	}
}

func conversationSnapshotSeveralTopics(w *conversationWorld) {
	a, b := w.topic("multia", 2), w.topic("multib", 2)
	conv := w.conv()
	w.events(a, conv, 1, 3)
	w.events(b, conv, 4, 4)
	var steps int
	f := tallyFold(a, &steps)
	f.Topics = []string{a, b}
	store := conversation.NewMemorySnapshots()
	if _, err := f.Checkpoint(w.ctx, w.tr, store, conv); !errors.Is(err, conversation.ErrSnapshotTopics) {
		w.t.Fatalf("checkpoint of two topics: %v; want ErrSnapshotTopics", err)
	}
	if _, err := f.LoadWith(w.ctx, w.tr, store, conv); !errors.Is(err, conversation.ErrSnapshotTopics) {
		w.t.Fatalf("load with a store over two topics: %v; want ErrSnapshotTopics", err)
	}
	if s, err := f.Load(w.ctx, w.tr, conv, conversation.Full()); err != nil || s != (tally{Sum: 10, Count: 4}) {
		w.t.Fatalf("full replay of two topics: %+v, %v", s, err)
	}
}

func conversationSnapshotMemory(w *conversationWorld) {
	store := conversation.NewMemorySnapshots()
	snapshotScenario(w, w.topic("snap", 2), func() conversation.SnapshotStore { return store })
}

func conversationSnapshotTopic(w *conversationWorld) {
	snaps := w.topic("snaps", 2)
	// Another conversation's snapshot on the same topic is passed over.
	var steps int
	other := w.conv()
	w.say(snaps, other, "x", "not a snapshot")
	topic := w.topic("snapsrc", 2)
	w.events(topic, other, 1, 2)
	if _, err := tallyFold(topic, &steps).Checkpoint(w.ctx, w.tr, conversation.NewTopicSnapshots(w.tr, snaps), other); err != nil {
		w.t.Fatal(err)
	}
	// Every call builds a fresh store: what it knows is on the log.
	snapshotScenario(w, topic, func() conversation.SnapshotStore { return conversation.NewTopicSnapshots(w.tr, snaps) })
}

// conversationSession writes a per-user conversation through one client and
// reads it through another, as a restarted process would.
func conversationSession(w *conversationWorld) {
	topic := w.topic("session", 4)
	user := fmt.Sprintf("user-%x", w.salt)
	conv := conversation.PerUser.ConversationFor(user, nil)
	w.say(topic, conv, user, "hello")
	w.say(topic, conversation.PerUser.ConversationFor(user+"-other", nil), "someone", "not yours")
	second := runtime.NewClient(w.tr, runtime.ClientConfig{})
	defer second.Close()
	again := conversation.PerUser.ConversationFor(user, second.IDs())
	if again != conv {
		w.t.Fatalf("the user mapped to %s, then %s", conv, again)
	}
	prov := wire.Provenance{Conversation: again, Agent: user}
	if _, err := second.SendPlain(w.ctx, topic, prov, []byte("hello again")); err != nil {
		w.t.Fatal(err)
	}
	got := bodies(w.assemble(again, conversation.Options{Topics: []string{topic}}))
	if !sameStrings(got, []string{"hello", "hello again"}) {
		w.t.Fatalf("session history %q", got)
	}
}
