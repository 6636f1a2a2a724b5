package iggytest_test

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/xxh32"
	"github.com/lasergo/laser/lasertest"
)

func pollOffset(t *testing.T, c iggcon.Client, partition uint32, offset uint64, count uint32) *iggcon.PolledMessage {
	t.Helper()
	pm, err := c.PollMessages(id(t, "s"), id(t, "t"), iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(offset), count, false, ptr(partition))
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	return pm
}

func TestSendAssignsConsecutiveOffsetsAndOneTimestampPerBatch(t *testing.T) {
	clock := lasertest.NewManualClock(time.UnixMicro(1_000_000))
	c := login(t, iggytest.Start(t, iggytest.Config{Clock: clock}))
	setup(t, c, 1)
	send(t, c, iggcon.PartitionId(0), "a", "b")
	clock.Advance(time.Second)
	send(t, c, iggcon.PartitionId(0), "c")
	pm := pollOffset(t, c, 0, 0, 10)
	if pm.PartitionId != 0 || pm.CurrentOffset != 2 || pm.MessageCount != 3 {
		t.Fatalf("poll meta = %d %d %d", pm.PartitionId, pm.CurrentOffset, pm.MessageCount)
	}
	if got := payloads(pm.Messages); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("payloads = %v", got)
	}
	for i, m := range pm.Messages {
		if m.Header.Offset != uint64(i) {
			t.Fatalf("message %d has offset %d", i, m.Header.Offset)
		}
		if m.Header.Id == (iggcon.MessageID{}) {
			t.Fatalf("message %d kept the zero id", i)
		}
	}
	ts := []uint64{pm.Messages[0].Header.Timestamp, pm.Messages[1].Header.Timestamp, pm.Messages[2].Header.Timestamp}
	if ts[0] != 1_000_000 || ts[1] != ts[0] || ts[2] != 2_000_000 {
		t.Fatalf("timestamps = %v, want one per batch from the clock", ts)
	}
}

func TestSendKeepsCallerIDAndOriginTimestamp(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	msgID := [16]byte{1, 2, 3}
	m := message(t, "x", iggcon.WithID(msgID))
	if err := c.SendMessages(id(t, "s"), id(t, "t"), iggcon.None(), []iggcon.IggyMessage{m}); err != nil {
		t.Fatal(err)
	}
	got := pollOffset(t, c, 0, 0, 1).Messages[0].Header
	if got.Id != msgID || got.OriginTimestamp != m.Header.OriginTimestamp {
		t.Fatalf("header = %+v, want id %v origin %d", got, msgID, m.Header.OriginTimestamp)
	}
}

func TestSendBalancedRoundRobinsOverPartitions(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 3)
	for _, p := range []string{"a", "b", "c", "d"} {
		send(t, c, iggcon.None(), p)
	}
	want := map[uint32][]string{0: {"a", "d"}, 1: {"b"}, 2: {"c"}}
	for p, w := range want {
		if got := payloads(pollOffset(t, c, p, 0, 10).Messages); !slices.Equal(got, w) {
			t.Fatalf("partition %d = %v, want %v", p, got, w)
		}
	}
}

func TestSendByKeyUsesXXHash32(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 7)
	key := "01J0Y1ZAG00000000000000002"
	part, err := iggcon.EntityIdString(key)
	if err != nil {
		t.Fatal(err)
	}
	send(t, c, part, "k")
	want := xxh32.Sum32([]byte(key), 0) % 7
	if got := payloads(pollOffset(t, c, want, 0, 10).Messages); !slices.Equal(got, []string{"k"}) {
		t.Fatalf("partition %d = %v, want the keyed message", want, got)
	}
}

func TestSendToMissingPartitionFails(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 2)
	err := c.SendMessages(id(t, "s"), id(t, "t"), iggcon.PartitionId(2), []iggcon.IggyMessage{message(t, "x")})
	wantCode(t, err, ierror.PartitionNotFoundCode)
}

func TestSendRoundTripsTypedUserHeaders(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	key := func(s string) iggcon.HeaderKey {
		k, err := iggcon.NewHeaderKeyString(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	conv := make([]byte, 16)
	conv[0] = 2
	headers := []iggcon.HeaderEntry{
		{Key: key("agdx.av"), Value: iggcon.HeaderValue{Kind: iggcon.Uint32, Value: binary.LittleEndian.AppendUint32(nil, 1)}},
		{Key: key("agdx.ct"), Value: iggcon.HeaderValue{Kind: iggcon.Uint8, Value: []byte{3}}},
		{Key: key("gen_ai.conversation.id"), Value: iggcon.HeaderValue{Kind: iggcon.Uint128, Value: conv}},
		{Key: key("agdx.to"), Value: iggcon.HeaderValue{Kind: iggcon.String, Value: []byte("target-agent")}},
	}
	m := message(t, "payload", iggcon.WithUserHeaders(headers))
	if err := c.SendMessages(id(t, "s"), id(t, "t"), iggcon.PartitionId(0), []iggcon.IggyMessage{m}); err != nil {
		t.Fatal(err)
	}
	got := pollOffset(t, c, 0, 0, 1).Messages[0]
	if !slices.Equal(got.UserHeaders, m.UserHeaders) {
		t.Fatalf("user headers = %x, want %x", got.UserHeaders, m.UserHeaders)
	}
	if _, err := iggcon.DeserializeHeaders(got.UserHeaders); err != nil {
		t.Fatalf("headers do not parse: %v", err)
	}
}

// rawHeaders sets a message's user headers to b as they are, past the
// SDK's encoder, the way a hostile producer can.
func rawHeaders(b []byte) iggcon.IggyMessageOpt {
	return func(m *iggcon.IggyMessage) { m.UserHeaders = b }
}

// TestSendRefusesUserHeadersByTheWireRule: the server checks user headers
// with wire.ParseHeaders, answering InvalidHeaderKey for a bad key (a
// double key of 7 bytes, the fuzzer's input) and InvalidHeaderValue for a
// bad value, and stores a fixed-width key of its own width.
func TestSendRefusesUserHeadersByTheWireRule(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	sendRaw := func(b []byte) error {
		m := message(t, "p", rawHeaders(b))
		return c.SendMessages(id(t, "s"), id(t, "t"), iggcon.PartitionId(0), []iggcon.IggyMessage{m})
	}
	wantCode(t, sendRaw([]byte("\x0f\a\x00\x00\x000000000\x02\a\x00\x00\x000000000")), ierror.InvalidHeaderKeyCode)
	wantCode(t, sendRaw([]byte{2, 1, 0, 0, 0, 'k', byte(iggcon.Uint64), 4, 0, 0, 0, 1, 2, 3, 4}), ierror.InvalidHeaderValueCode)
	good := []byte("\x0f\b\x00\x00\x0000000000\x02\a\x00\x00\x000000000")
	if err := sendRaw(good); err != nil {
		t.Fatalf("a double key of 8 bytes: %v", err)
	}
	got := pollOffset(t, c, 0, 0, 10).Messages
	if len(got) != 1 {
		t.Fatalf("stored %d messages, want the one with good headers", len(got))
	}
	if !slices.Equal(got[0].UserHeaders, good) {
		t.Fatalf("stored headers %x, want %x", got[0].UserHeaders, good)
	}
}

func TestPolledMessageWithoutHeadersHasNilUserHeaders(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	send(t, c, iggcon.PartitionId(0), "x")
	if h := pollOffset(t, c, 0, 0, 1).Messages[0].UserHeaders; h != nil {
		t.Fatalf("user headers = %x, want nil", h)
	}
}

func TestPollStrategies(t *testing.T) {
	clock := lasertest.NewManualClock(time.UnixMicro(100))
	c := login(t, iggytest.Start(t, iggytest.Config{Clock: clock}))
	setup(t, c, 1)
	send(t, c, iggcon.PartitionId(0), "m0", "m1")
	clock.Advance(100 * time.Microsecond)
	send(t, c, iggcon.PartitionId(0), "m2", "m3", "m4")
	tests := []struct {
		name     string
		strategy iggcon.PollingStrategy
		count    uint32
		want     []string
	}{
		{"offset", iggcon.OffsetPollingStrategy(1), 2, []string{"m1", "m2"}},
		{"offset past the end", iggcon.OffsetPollingStrategy(5), 2, []string{}},
		{"first", iggcon.FirstPollingStrategy(), 2, []string{"m0", "m1"}},
		{"last", iggcon.LastPollingStrategy(), 2, []string{"m3", "m4"}},
		{"last more than exist", iggcon.LastPollingStrategy(), 9, []string{"m0", "m1", "m2", "m3", "m4"}},
		{"timestamp", iggcon.TimestampPollingStrategy(150), 9, []string{"m2", "m3", "m4"}},
		{"next with nothing stored", iggcon.NextPollingStrategy(), 2, []string{"m0", "m1"}},
		{"count zero", iggcon.FirstPollingStrategy(), 0, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pm, err := c.PollMessages(id(t, "s"), id(t, "t"), iggcon.DefaultConsumer(), tc.strategy, tc.count, false, ptr(0))
			if err != nil {
				t.Fatal(err)
			}
			if got := payloads(pm.Messages); !slices.Equal(got, tc.want) {
				t.Fatalf("payloads = %v, want %v", got, tc.want)
			}
			if pm.CurrentOffset != 4 {
				t.Fatalf("current offset = %d, want 4", pm.CurrentOffset)
			}
		})
	}
}

func TestPollNextStartsAfterTheStoredOffset(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	send(t, c, iggcon.PartitionId(0), "m0", "m1", "m2")
	consumer := iggcon.NewSingleConsumer(id(t, "reader"))
	if err := c.StoreConsumerOffset(consumer, id(t, "s"), id(t, "t"), 0, ptr(0)); err != nil {
		t.Fatal(err)
	}
	pm, err := c.PollMessages(id(t, "s"), id(t, "t"), consumer, iggcon.NextPollingStrategy(), 10, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := payloads(pm.Messages); !slices.Equal(got, []string{"m1", "m2"}) {
		t.Fatalf("payloads = %v", got)
	}
}

func TestPollWithAutoCommitStoresTheLastOffset(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	send(t, c, iggcon.PartitionId(0), "m0", "m1", "m2")
	consumer := iggcon.NewSingleConsumer(id(t, uint32(7)))
	for _, want := range [][]string{{"m0", "m1"}, {"m2"}, {}} {
		pm, err := c.PollMessages(id(t, "s"), id(t, "t"), consumer, iggcon.NextPollingStrategy(), 2, true, ptr(0))
		if err != nil {
			t.Fatal(err)
		}
		if got := payloads(pm.Messages); !slices.Equal(got, want) {
			t.Fatalf("payloads = %v, want %v", got, want)
		}
	}
	off, err := c.GetConsumerOffset(consumer, id(t, "s"), id(t, "t"), ptr(0))
	if err != nil || off == nil || off.StoredOffset != 2 || off.CurrentOffset != 2 {
		t.Fatalf("offset = %+v, %v; want stored 2", off, err)
	}
}

func TestEmptyPartitionReportsCurrentOffsetZero(t *testing.T) {
	c := login(t, iggytest.Start(t, iggytest.Config{}))
	setup(t, c, 1)
	pm := pollOffset(t, c, 0, 0, 10)
	if pm.CurrentOffset != 0 || len(pm.Messages) != 0 {
		t.Fatalf("poll = %+v", pm)
	}
}
