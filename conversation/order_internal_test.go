package conversation

import (
	"slices"
	"testing"

	"github.com/lasergo/laser/runtime"
)

func TestOrderBreaksTimestampTiesByTopicThenPartitionThenOffset(t *testing.T) {
	mk := func(ts uint64, topic int, p uint32, off uint64) entry {
		m := &runtime.Message{Timestamp: ts}
		m.Position = runtime.Position{Partition: p, Offset: off}
		return entry{topic: topic, m: m}
	}
	entries := []entry{
		mk(20, 0, 0, 1),
		mk(10, 1, 0, 0),
		mk(10, 0, 2, 5),
		mk(10, 0, 1, 9),
		mk(10, 0, 1, 3),
		mk(5, 1, 3, 7),
	}
	order(entries)
	var got []string
	for _, e := range entries {
		got = append(got, e.m.Position.String()+"@"+string(rune('0'+e.topic)))
	}
	want := []string{"3:7@1", "1:3@0", "1:9@0", "2:5@0", "0:0@1", "0:1@0"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}
