package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func sumFold(topics ...string) conversation.Fold[int] {
	return conversation.Fold[int]{
		Topics: topics,
		Step: func(s int, m *runtime.Message) int {
			n, _ := strconv.Atoi(string(m.Body()))
			return s + n
		},
	}
}

func TestCheckpointAndLoadWithRefuseAFoldOfSeveralTopics(t *testing.T) {
	ctx := context.Background()
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(ctx, 2, runtime.TopicCommands, runtime.TopicResponses); err != nil {
		t.Fatal(err)
	}
	client := runtime.NewClient(log, runtime.ClientConfig{})
	conv := conversation.Derive("account-1")
	// The two topics' offsets differ on the conversation's partition: a
	// snapshot keyed by partition only would resume one at the other's.
	for _, topic := range []string{runtime.TopicCommands, runtime.TopicCommands, runtime.TopicCommands, runtime.TopicResponses} {
		if _, err := client.SendPlain(ctx, topic, wire.Provenance{Conversation: conv}, []byte("1")); err != nil {
			t.Fatal(err)
		}
	}
	store := conversation.NewMemorySnapshots()
	for name, f := range map[string]conversation.Fold[int]{"the default topics": sumFold(), "two topics": sumFold(runtime.TopicCommands, runtime.TopicResponses)} {
		if _, err := f.Checkpoint(ctx, log, store, conv); !errors.Is(err, conversation.ErrSnapshotTopics) {
			t.Fatalf("Checkpoint of %s: %v; want ErrSnapshotTopics", name, err)
		}
		if _, err := f.LoadWith(ctx, log, store, conv); !errors.Is(err, conversation.ErrSnapshotTopics) {
			t.Fatalf("LoadWith of %s: %v; want ErrSnapshotTopics", name, err)
		}
	}
	if snap, _ := store.Latest(ctx, conv); snap != nil {
		t.Fatalf("a refused Checkpoint saved %+v", snap)
	}
	// One topic is exact.
	if s, err := sumFold(runtime.TopicCommands).Checkpoint(ctx, log, store, conv); err != nil || s != 3 {
		t.Fatalf("checkpoint of one topic: %d, %v", s, err)
	}
}

func TestFromOffsetsOlderThanTheReadWindowIsAnErrorNotAGap(t *testing.T) {
	ctx := context.Background()
	log := embedlog.New("laser", embedlog.Config{})
	if err := log.EnsureTopics(ctx, 1, "ledger"); err != nil {
		t.Fatal(err)
	}
	conv := conversation.Derive("account-2")
	prov := wire.Provenance{Conversation: conv}
	headers, err := prov.Headers()
	if err != nil {
		t.Fatal(err)
	}
	const n = conversation.Window + 5
	recs := make([]runtime.Outgoing, n)
	for i := range recs {
		recs[i] = runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: []byte("1")}
	}
	if _, err := log.Publish(ctx, "ledger", recs...); err != nil {
		t.Fatal(err)
	}
	f := sumFold("ledger")
	if _, err := f.Load(ctx, log, conv, conversation.FromOffsets(map[uint32]uint64{0: 4})); !errors.Is(err, conversation.ErrBeyondWindow) {
		t.Fatalf("a start before the window: %v; want ErrBeyondWindow", err)
	}
	if s, err := f.Load(ctx, log, conv, conversation.FromOffsets(map[uint32]uint64{0: 5})); err != nil || s != conversation.Window {
		t.Fatalf("a start at the window: %d, %v", s, err)
	}
	// A snapshot that old resumes no better.
	store := conversation.NewMemorySnapshots()
	_ = store.Save(ctx, &wire.FoldSnapshot{Conversation: conv, AsOf: map[uint32]uint64{0: 2}, State: []byte("2")})
	if _, err := f.LoadWith(ctx, log, store, conv); !errors.Is(err, conversation.ErrBeyondWindow) {
		t.Fatalf("a snapshot older than the window: %v; want ErrBeyondWindow", err)
	}
}

// readCounter counts ReadRange calls per partition.
type readCounter struct {
	runtime.Transport
	mu    sync.Mutex
	reads map[uint32]int
}

func (r *readCounter) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	r.mu.Lock()
	r.reads[partition]++
	r.mu.Unlock()
	return r.Transport.ReadRange(ctx, topic, partition, offset, count)
}

func TestTopicSnapshotsLatestStopsAtTheConversationsPartition(t *testing.T) {
	ctx := context.Background()
	log := logstore.New("laser") // the engine, to ask which partition a key lands on
	if err := log.EnsureTopics(ctx, 4, conversation.SnapshotTopic); err != nil {
		t.Fatal(err)
	}
	topic, _ := log.Topic(conversation.SnapshotTopic)
	// A conversation whose snapshots land on partition 0, and others
	// snapshotted on every partition.
	var conv wire.ID
	for i := 0; ; i++ {
		conv = conversation.Derive(fmt.Sprint("account-", i))
		if topic.PartitionForKey([]byte(wire.PartitionKey(conv))) == 0 {
			break
		}
	}
	store := conversation.NewTopicSnapshots(log, "")
	for i := 0; i < 40; i++ {
		other := conversation.Derive(fmt.Sprint("other-", i))
		if err := store.Save(ctx, &wire.FoldSnapshot{Conversation: other, AsOf: map[uint32]uint64{0: 1}, State: []byte("0")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, state := range []string{"1", "2"} {
		if err := store.Save(ctx, &wire.FoldSnapshot{Conversation: conv, AsOf: map[uint32]uint64{0: 1}, State: []byte(state)}); err != nil {
			t.Fatal(err)
		}
	}
	counter := &readCounter{Transport: log, reads: make(map[uint32]int)}
	snap, err := conversation.NewTopicSnapshots(counter, "").Latest(ctx, conv)
	if err != nil || snap == nil || string(snap.State) != "2" {
		t.Fatalf("latest %+v, %v; want the newest snapshot", snap, err)
	}
	for p, n := range counter.reads {
		if p != 0 {
			t.Fatalf("read partition %d %d times after the snapshot was found on partition 0 (reads %v)", p, n, counter.reads)
		}
	}
}
