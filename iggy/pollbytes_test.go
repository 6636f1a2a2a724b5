package iggy_test

import (
	"bytes"
	"testing"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
)

// The finding: one poll of PollBatch records took in replies of
// any size (up to 1 GiB each) whatever MaxQueuedBytes said. Under a 3 MiB
// bound a poll of 100 records of 1 MiB takes in at most 3 MiB, and the
// polls that follow deliver the rest in order, losing nothing.
func TestOnePollTakesInAtMostMaxPollBytes(t *testing.T) {
	s := iggytest.Start(t)
	tr := dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test", iggy.WithMaxPollBytes(3<<20))
	ctx := t.Context()
	if err := tr.EnsureTopics(ctx, 1, "big"); err != nil {
		t.Fatal(err)
	}
	const n, size = 8, 1 << 20
	for i := range n {
		payload := bytes.Repeat([]byte{byte('a' + i)}, size)
		if _, err := tr.Publish(ctx, "big", runtime.Outgoing{Key: "k", Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := tr.Join(ctx, "big", "g")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var got []runtime.Incoming
	for polls := 0; len(got) < n; polls++ {
		if polls > 3*n {
			t.Fatalf("%d of %d records after %d polls", len(got), n, polls)
		}
		recs, err := sub.Poll(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		taken := 0
		for i := range recs {
			taken += recs[i].Size()
		}
		if taken > 3<<20 {
			t.Fatalf("one poll took in %d records, %d bytes, over the 3 MiB bound", len(recs), taken)
		}
		got = append(got, recs...)
	}
	for i := range got {
		if got[i].Offset != uint64(i) || got[i].Payload[0] != byte('a'+i) {
			t.Fatalf("record %d: offset %d payload %q...", i, got[i].Offset, got[i].Payload[:1])
		}
	}
}

// A record larger than the bound still comes, alone.
func TestARecordLargerThanMaxPollBytesStillComesAlone(t *testing.T) {
	s := iggytest.Start(t)
	tr := dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test", iggy.WithMaxPollBytes(1<<10))
	ctx := t.Context()
	if err := tr.EnsureTopics(ctx, 1, "big"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := tr.Publish(ctx, "big", runtime.Outgoing{Key: "k", Payload: make([]byte, 64<<10)}); err != nil {
			t.Fatal(err)
		}
	}
	sub, err := tr.Join(ctx, "big", "g")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for want := uint64(0); want < 2; want++ {
		recs, err := sub.Poll(ctx, 100)
		if err != nil || len(recs) != 1 || recs[0].Offset != want {
			t.Fatalf("poll %d: %d records, %v", want, len(recs), err)
		}
	}
}
