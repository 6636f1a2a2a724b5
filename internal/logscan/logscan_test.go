package logscan_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
)

// fill publishes at least n records to each partition of a new topic.
func fill(t *testing.T, partitions uint32, n int) *embedlog.Log {
	t.Helper()
	ctx := context.Background()
	l := embedlog.New("scan", embedlog.Config{})
	if err := l.EnsureTopics(ctx, partitions, "t"); err != nil {
		t.Fatal(err)
	}
	// Unkeyed records go round the partitions: publish until each has n.
	for i := 0; ; i++ {
		done := true
		for p := range partitions {
			next, err := l.NextOffset(ctx, "t", p)
			if err != nil {
				t.Fatal(err)
			}
			done = done && next >= uint64(n)
		}
		if done {
			return l
		}
		if _, err := l.Publish(ctx, "t", runtime.Outgoing{Payload: fmt.Appendf(nil, "r%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPartitionReadsFromUpToEndAndReturnsWhereToResume(t *testing.T) {
	l := fill(t, 1, 5)
	var got []uint64
	next, err := logscan.Partition(context.Background(), l, "t", 0, 1, 4, func(r *runtime.Incoming) { got = append(got, r.Offset) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []uint64{1, 2, 3}) || next != 4 {
		t.Fatalf("read %v, resume at %d; want [1 2 3] and 4", got, next)
	}
	next, err = logscan.Partition(context.Background(), l, "t", 0, 4, 4, func(*runtime.Incoming) { t.Fatal("read past end") })
	if err != nil || next != 4 {
		t.Fatalf("empty range: resume at %d, %v; want 4, nil", next, err)
	}
}

func TestTopicReadsEveryPartitionToItsTailFromTheGivenOffsets(t *testing.T) {
	l := fill(t, 3, 2)
	ctx := context.Background()
	tails := map[uint32]uint64{}
	for p := range uint32(3) {
		tails[p], _ = l.NextOffset(ctx, "t", p)
	}
	seen := map[uint32]int{}
	next, err := logscan.Topic(ctx, l, "t", map[uint32]uint64{1: 1}, func(r *runtime.Incoming) { seen[r.Partition]++ })
	if err != nil {
		t.Fatal(err)
	}
	for p := range uint32(3) {
		want := int(tails[p])
		if p == 1 {
			want-- // started at offset 1
		}
		if seen[p] != want || next[p] != tails[p] {
			t.Errorf("partition %d: read %d, resume at %d; want %d and %d", p, seen[p], next[p], want, tails[p])
		}
	}
}

func TestTopicReportsAMissingTopic(t *testing.T) {
	_, err := logscan.Topic(context.Background(), embedlog.New("scan", embedlog.Config{}), "nope", nil, func(*runtime.Incoming) {})
	if !errors.Is(err, embedlog.ErrNoTopic) {
		t.Fatalf("Topic on a missing topic = %v, want ErrNoTopic", err)
	}
}
