package logstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/wire"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func mustTopic(t *testing.T, l *Log, name string, partitions uint32) *Topic {
	t.Helper()
	tp, err := l.CreateTopic(name, partitions)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

func recs(payloads ...string) []Record {
	out := make([]Record, len(payloads))
	for i, p := range payloads {
		out[i] = Record{Payload: []byte(p)}
	}
	return out
}

func TestPartitionForKeyMatchesIggy(t *testing.T) {
	// Hand-checked: xxh32("conversation-1")=0x2CF99F99, xxh32("job")=0x5C55ED68,
	// xxh32("key-2")=0x2E65429C, xxh32("abc")=0x32D153FF.
	cases := []struct {
		key        string
		partitions uint32
		want       uint32
	}{
		{"conversation-1", 3, 0x2CF99F99 % 3},
		{"conversation-1", 4, 1},
		{"conversation-1", 7, 1},
		{"job", 3, 2},
		{"job", 7, 5},
		{"key-2", 7, 3},
		{"abc", 4, 3},
		{"abc", 1, 0},
	}
	l := New("s")
	for _, c := range cases {
		tp := mustTopic(t, l, fmt.Sprintf("t-%s-%d", c.key, c.partitions), c.partitions)
		if got := tp.PartitionForKey([]byte(c.key)); got != c.want {
			t.Errorf("PartitionForKey(%q) over %d = %d, want %d", c.key, c.partitions, got, c.want)
		}
	}
}

func TestNextBalancedRoundRobin(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 3)
	var got []uint32
	for range 7 {
		got = append(got, tp.NextBalanced())
	}
	if want := []uint32{0, 1, 2, 0, 1, 2, 0}; !cmp.Equal(got, want) {
		t.Fatalf("NextBalanced sequence %v, want %v", got, want)
	}
}

func TestAppendAssignsConsecutiveOffsets(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 2)
	first, err := tp.Append(1, recs("a", "b", "c"))
	if err != nil || first != 0 {
		t.Fatalf("first Append = %d, %v", first, err)
	}
	first, err = tp.Append(1, recs("d", "e"))
	if err != nil || first != 3 {
		t.Fatalf("second Append = %d, %v; want 3", first, err)
	}
	got, err := tp.Read(1, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if r.Offset != uint64(i) || string(r.Payload) != string(rune('a'+i)) {
			t.Errorf("record %d = offset %d payload %q", i, r.Offset, r.Payload)
		}
	}
	if other, _ := tp.Read(0, 0, 10); len(other) != 0 {
		t.Errorf("partition 0 holds %d records, want none", len(other))
	}
}

func TestAppendStampsBatchWithClock(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	tp := mustTopic(t, New("s", WithClock(clock)), "t", 1)
	if _, err := tp.Append(0, recs("a", "b")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(1500 * time.Microsecond)
	origin := Record{Payload: []byte("c"), OriginTimestamp: 42}
	if _, err := tp.Append(0, []Record{origin}); err != nil {
		t.Fatal(err)
	}
	got, _ := tp.Read(0, 0, 10)
	t0 := uint64(epoch.UnixMicro())
	want := []struct{ ts, origin uint64 }{{t0, t0}, {t0, t0}, {t0 + 1500, 42}}
	for i, w := range want {
		if got[i].Timestamp != w.ts || got[i].OriginTimestamp != w.origin {
			t.Errorf("record %d timestamp %d origin %d, want %d %d", i, got[i].Timestamp, got[i].OriginTimestamp, w.ts, w.origin)
		}
	}
	if tp.CreatedAt() != t0 {
		t.Errorf("CreatedAt = %d, want %d", tp.CreatedAt(), t0)
	}
}

func TestAppendAssignsMissingIDs(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 1)
	given := [16]byte{15: 7}
	if _, err := tp.Append(0, []Record{{Payload: []byte("a")}, {Payload: []byte("b")}, {Payload: []byte("c"), ID: given}}); err != nil {
		t.Fatal(err)
	}
	got, _ := tp.Read(0, 0, 3)
	if got[0].ID == ([16]byte{}) || got[1].ID == ([16]byte{}) || got[0].ID == got[1].ID {
		t.Errorf("assigned ids %x and %x, want two distinct non-zero ids", got[0].ID, got[1].ID)
	}
	if got[2].ID != given {
		t.Errorf("caller's id replaced: %x", got[2].ID)
	}
}

func TestAppendCopiesCallerBuffers(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 1)
	payload := []byte("payload")
	headers := wire.Headers{{Key: "k", Value: wire.StringValue("value")}}
	if _, err := tp.Append(0, []Record{{Payload: payload, Headers: wire.MustEncodeHeaders(headers)}}); err != nil {
		t.Fatal(err)
	}
	payload[0] = 'X'
	headers[0].Value.Data[0] = 'X'
	headers[0].Key = "changed"
	got, _ := tp.Read(0, 0, 1)
	if v, _ := got[0].Headers.Get("k"); string(got[0].Payload) != "payload" || string(v.Data) != "value" {
		t.Fatalf("stored record changed with the caller's buffers: %q %v", got[0].Payload, got[0].Headers)
	}
}

func TestReadDoesNotExposeStoredHeaders(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 1)
	in := []Record{
		{Payload: []byte("a"), Headers: wire.MustEncodeHeaders(wire.Headers{{Key: "k", Value: wire.Uint8Value(1)}})},
		{Payload: []byte("b"), Headers: wire.MustEncodeHeaders(wire.Headers{{Key: "k", Value: wire.Uint8Value(2)}})},
	}
	if _, err := tp.Append(0, in); err != nil {
		t.Fatal(err)
	}
	got, _ := tp.Read(0, 0, 2)
	// A reader that writes through the bytes it was given (which it must
	// not) still changes only its own copy.
	v, _ := got[0].Headers.Get("k")
	v.Data[0] = 9
	got[0].Offset = 99
	again, _ := tp.Read(0, 0, 2)
	if v, _ := again[0].Headers.Get("k"); v.Data[0] != 1 || again[0].Headers.Len() != 1 || again[0].Offset != 0 {
		t.Errorf("stored record 0 changed through a read copy: %+v", again[0])
	}
	if v, _ := got[1].Headers.Get("k"); v.Data[0] != 2 {
		t.Errorf("writing record 0's headers spilled into the copy of record 1: %v", got[1].Headers)
	}
}

func TestReadWindow(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 1)
	if _, err := tp.Append(0, recs("0", "1", "2", "3", "4")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		from uint64
		max  int
		want []string
	}{
		{0, 2, []string{"0", "1"}},
		{3, 10, []string{"3", "4"}},
		{5, 10, nil},
		{1, 0, nil},
	}
	for _, c := range cases {
		got, err := tp.Read(0, c.from, c.max)
		if err != nil {
			t.Fatal(err)
		}
		var ps []string
		for _, r := range got {
			ps = append(ps, string(r.Payload))
		}
		if !cmp.Equal(ps, c.want) {
			t.Errorf("Read(%d, %d) = %q, want %q", c.from, c.max, ps, c.want)
		}
	}
	if _, err := tp.Read(0, 0, -1); !errors.Is(err, ErrBadCount) {
		t.Errorf("Read with a negative max: %v, want ErrBadCount", err)
	}
	if _, err := tp.Read(1, 0, 1); !errors.Is(err, ErrNoPartition) {
		t.Errorf("Read of partition 1 of 1: %v, want ErrNoPartition", err)
	}
}

func TestReadFromTimestamp(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	tp := mustTopic(t, New("s", WithClock(clock)), "t", 1)
	for _, batch := range [][]string{{"a", "b"}, {"c"}, {"d"}} {
		if _, err := tp.Append(0, recs(batch...)); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Second)
	}
	t0 := uint64(epoch.UnixMicro())
	cases := []struct {
		ts   uint64
		max  int
		want string
	}{
		{0, 10, "abcd"},
		{t0, 10, "abcd"},
		{t0 + 1, 10, "cd"},
		{t0 + 1_000_000, 1, "c"},
		{t0 + 2_000_000, 10, "d"},
		{t0 + 3_000_000, 10, ""},
	}
	for _, c := range cases {
		got, err := tp.ReadFromTimestamp(0, c.ts, c.max)
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, r := range got {
			s += string(r.Payload)
		}
		if s != c.want {
			t.Errorf("ReadFromTimestamp(%d, %d) = %q, want %q", c.ts, c.max, s, c.want)
		}
	}
}

func TestPartitionInfo(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 2)
	info, err := tp.PartitionInfo(1)
	if err != nil || info.ID != 1 || info.CurrentOffset != 0 || info.Messages != 0 || info.SizeBytes != 0 {
		t.Fatalf("empty partition info %+v, %v", info, err)
	}
	h := wire.Headers{{Key: "ab", Value: wire.Uint8Value(1)}}
	if _, err := tp.Append(1, []Record{{Payload: []byte("xyz"), Headers: wire.MustEncodeHeaders(h)}, {Payload: []byte("q")}}); err != nil {
		t.Fatal(err)
	}
	info, _ = tp.PartitionInfo(1)
	wantSize := uint64(64+3+h.EncodedLen()) + 64 + 1 // the user headers as they travel
	if info.CurrentOffset != 1 || info.Messages != 2 || info.SizeBytes != wantSize {
		t.Errorf("partition info %+v, want current offset 1, 2 messages, %d bytes", info, wantSize)
	}
	if _, err := tp.PartitionInfo(2); !errors.Is(err, ErrNoPartition) {
		t.Errorf("PartitionInfo(2): %v, want ErrNoPartition", err)
	}
}

func TestAppendRejectsBadInput(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 1)
	if _, err := tp.Append(0, nil); !errors.Is(err, ErrBadCount) {
		t.Errorf("empty Append: %v, want ErrBadCount", err)
	}
	if _, err := tp.Append(3, recs("a")); !errors.Is(err, ErrNoPartition) {
		t.Errorf("Append to partition 3: %v, want ErrNoPartition", err)
	}
}

func TestCreateTopicValidates(t *testing.T) {
	l := New("s")
	mustTopic(t, l, "t", 1)
	cases := []struct {
		name       string
		partitions uint32
		want       error
	}{
		{"t", 1, ErrTopicExists},
		{"zero", 0, ErrBadPartitions},
		{"many", MaxPartitions + 1, ErrBadPartitions},
		{"", 1, ErrBadName},
	}
	for _, c := range cases {
		if _, err := l.CreateTopic(c.name, c.partitions); !errors.Is(err, c.want) {
			t.Errorf("CreateTopic(%q, %d): %v, want %v", c.name, c.partitions, err, c.want)
		}
	}
	if _, err := l.CreateTopic("max", MaxPartitions); err != nil {
		t.Errorf("CreateTopic with %d partitions: %v", MaxPartitions, err)
	}
}

func TestTopicIDsCountFromZero(t *testing.T) {
	l := New("s", WithStreamID(3))
	a, b, c := mustTopic(t, l, "a", 1), mustTopic(t, l, "b", 1), mustTopic(t, l, "c", 1)
	if a.ID() != 0 || b.ID() != 1 || c.ID() != 2 {
		t.Fatalf("topic ids %d %d %d, want 0 1 2", a.ID(), b.ID(), c.ID())
	}
	if got, ok := l.TopicByID(1); !ok || got != b {
		t.Errorf("TopicByID(1) = %v, %v", got, ok)
	}
	var names []string
	for _, tp := range l.Topics() {
		names = append(names, tp.Name())
	}
	if !cmp.Equal(names, []string{"a", "b", "c"}) {
		t.Errorf("Topics() = %v", names)
	}
	if l.StreamID() != 3 || l.Stream() != "s" {
		t.Errorf("stream %q id %d", l.Stream(), l.StreamID())
	}
}

func TestDeleteTopic(t *testing.T) {
	l := New("s")
	old := mustTopic(t, l, "t", 1)
	if _, err := old.Append(0, recs("a")); err != nil {
		t.Fatal(err)
	}
	if err := l.DeleteTopic("t"); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Topic("t"); ok {
		t.Error("deleted topic still found by name")
	}
	if _, ok := l.TopicByID(old.ID()); ok {
		t.Error("deleted topic still found by id")
	}
	if _, err := old.Append(0, recs("b")); !errors.Is(err, ErrNoTopic) {
		t.Errorf("Append through a deleted topic: %v, want ErrNoTopic", err)
	}
	if err := l.DeleteTopic("t"); !errors.Is(err, ErrNoTopic) {
		t.Errorf("second DeleteTopic: %v, want ErrNoTopic", err)
	}
	again := mustTopic(t, l, "t", 1)
	if again.ID() == old.ID() {
		t.Errorf("recreated topic reused id %d", old.ID())
	}
	if got, _ := again.Read(0, 0, 10); len(got) != 0 {
		t.Errorf("recreated topic holds %d old records", len(got))
	}
}

func TestStoreOffset(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 2)
	c := SingleConsumerKey("c")
	if err := tp.StoreOffset(c, 0, 0); !errors.Is(err, ErrInvalidOffset) {
		t.Errorf("store on an empty partition: %v, want ErrInvalidOffset", err)
	}
	if _, err := tp.Append(0, recs("a", "b")); err != nil {
		t.Fatal(err)
	}
	if err := tp.StoreOffset(c, 0, 2); !errors.Is(err, ErrInvalidOffset) {
		t.Errorf("store past the last offset: %v, want ErrInvalidOffset", err)
	}
	if err := tp.StoreOffset(c, 5, 0); !errors.Is(err, ErrNoPartition) {
		t.Errorf("store on partition 5: %v, want ErrNoPartition", err)
	}
	if _, ok := tp.StoredOffset(c, 0); ok {
		t.Error("a failed store left an offset")
	}
	if err := tp.StoreOffset(c, 0, 1); err != nil {
		t.Fatal(err)
	}
	if off, ok := tp.StoredOffset(c, 0); !ok || off != 1 {
		t.Errorf("StoredOffset = %d, %v; want 1", off, ok)
	}
	if _, ok := tp.StoredOffset(GroupConsumerKey("c"), 0); ok {
		t.Error("a group named like the single consumer sees its offset")
	}
	if err := tp.DeleteOffset(c, 0); err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.StoredOffset(c, 0); ok {
		t.Error("offset still stored after DeleteOffset")
	}
	if err := tp.DeleteOffset(c, 0); !errors.Is(err, ErrNoOffset) {
		t.Errorf("second DeleteOffset: %v, want ErrNoOffset", err)
	}
}

func TestAddPartitions(t *testing.T) {
	tp := mustTopic(t, New("s"), "t", 2)
	if err := tp.AddPartitions(3); err != nil {
		t.Fatal(err)
	}
	if tp.Partitions() != 5 {
		t.Fatalf("Partitions = %d, want 5", tp.Partitions())
	}
	if _, err := tp.Append(4, recs("a")); err != nil {
		t.Errorf("Append to a new partition: %v", err)
	}
	if err := tp.AddPartitions(MaxPartitions); !errors.Is(err, ErrBadPartitions) {
		t.Errorf("growing past the limit: %v, want ErrBadPartitions", err)
	}
	if err := tp.AddPartitions(0); !errors.Is(err, ErrBadPartitions) {
		t.Errorf("adding 0 partitions: %v, want ErrBadPartitions", err)
	}
}
