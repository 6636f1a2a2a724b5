package iggy

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	binaryserialization "github.com/apache/iggy/foreign/go/binary_serialization"
	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// pollReply lays out a poll reply of partition 3 holding one message per
// payload, from offset first, each with the given headers.
func pollReply(t testing.TB, first uint64, payloads []string, headers []wire.Headers) []byte {
	t.Helper()
	b := binary.LittleEndian.AppendUint32(nil, 3)
	b = binary.LittleEndian.AppendUint64(b, first+uint64(len(payloads)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payloads)))
	for i, p := range payloads {
		hb, err := appendHeaderBytes(nil, headers[i])
		if err != nil {
			t.Fatal(err)
		}
		var h [messageHeaderSize]byte
		binary.LittleEndian.PutUint64(h[24:], first+uint64(i))
		binary.LittleEndian.PutUint64(h[32:], 1_700_000_000_000_000+uint64(i))
		binary.LittleEndian.PutUint32(h[48:], uint32(len(hb)))
		binary.LittleEndian.PutUint32(h[52:], uint32(len(p)))
		b = append(append(append(b, h[:]...), p...), hb...)
	}
	return b
}

// TestDecodePollAgreesWithTheSDK decodes one reply with the subscription's
// codec and with the SDK's deserializer plus the conversion the SDK path
// runs: the same records, offsets, timestamps, payloads and headers, the
// same partition and current offset, and the skip below the cursor.
func TestDecodePollAgreesWithTheSDK(t *testing.T) {
	var payloads []string
	var headers []wire.Headers
	for i := range 7 {
		payloads = append(payloads, fmt.Sprintf("payload %d", i))
		h := wire.Headers{{Key: wire.HeaderIdempotencyKey, Value: wire.StringValue(fmt.Sprintf("k-%d", i))}}
		if i%3 == 1 {
			h = append(h, wire.Header{Key: "x-extra", Value: wire.Uint8Value(uint8(i))})
		}
		if i == 4 {
			h = nil
		}
		headers = append(headers, h)
	}
	reply := pollReply(t, 40, payloads, headers)
	tr := &Transport{cfg: Config{}.resolve()}
	for _, from := range []uint64{0, 42} {
		for _, limit := range []int{100, 3} {
			got, next, pp, err := tr.decodePoll(nil, 3, reply, from, limit)
			if err != nil {
				t.Fatal(err)
			}
			pm, err := binaryserialization.DeserializeFetchMessagesResponse(reply, iggcon.MESSAGE_COMPRESSION_NONE)
			if err != nil {
				t.Fatal(err)
			}
			want, wantNext := tr.incoming(nil, 3, pm.Messages, from, limit)
			if pp.partitionID != pm.PartitionId || pp.currentOffset != pm.CurrentOffset || next != wantNext || len(got) != len(want) {
				t.Fatalf("from %d limit %d: %d records to %d (partition %d at %d), SDK %d to %d (partition %d at %d)",
					from, limit, len(got), next, pp.partitionID, pp.currentOffset, len(want), wantNext, pm.PartitionId, pm.CurrentOffset)
			}
			for i := range got {
				g, w := got[i], want[i]
				if g.Position != w.Position || g.Timestamp != w.Timestamp || !bytes.Equal(g.Payload, w.Payload) || fmt.Sprint(g.Headers) != fmt.Sprint(w.Headers) {
					t.Fatalf("from %d limit %d record %d: %+v, SDK %+v", from, limit, i, g, w)
				}
			}
		}
	}
}

// TestDecodePollRefusesAMalformedReply cuts a valid reply short at every
// length and corrupts a message's lengths: the codec reports
// errMalformedReply (or, cut at a message boundary, returns the whole
// messages before it), and never panics where the SDK's deserializer would.
func TestDecodePollRefusesAMalformedReply(t *testing.T) {
	reply := pollReply(t, 0, []string{"a", "bb"}, []wire.Headers{{{Key: "k", Value: wire.StringValue("v")}}, nil})
	tr := &Transport{cfg: Config{}.resolve()}
	for n := 1; n < len(reply); n++ {
		got, _, _, err := tr.decodePoll(nil, 3, reply[:n], 0, 10)
		if err != nil && !errors.Is(err, errMalformedReply) {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if err == nil && len(got) > 1 {
			t.Fatalf("cut at %d of %d: %d records", n, len(reply), len(got))
		}
	}
	bad := bytes.Clone(reply)
	binary.LittleEndian.PutUint32(bad[16+52:], 1<<30) // the first payload claims 1 GiB
	if _, _, _, err := tr.decodePoll(nil, 3, bad, 0, 10); !errors.Is(err, errMalformedReply) {
		t.Fatalf("oversized payload: %v", err)
	}
}

// TestSubscriptionPollsWithItsOwnCodec pins that a subscription on an SDK
// client of the known layout polls through its own codec, under the SDK
// client's mutex, and reads what was published.
func TestSubscriptionPollsWithItsOwnCodec(t *testing.T) {
	s, err := iggytest.Listen("127.0.0.1:0", iggytest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	ctx := context.Background()
	tr, err := Dial(ctx, "iggy://iggy:iggy@"+s.Addr()+"/raw", Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	if err := tr.EnsureTopics(ctx, 1, "t"); err != nil {
		t.Fatal(err)
	}
	if err := tr.Append(ctx, "t", runtime.Outgoing{Payload: []byte("one")}, runtime.Outgoing{Payload: []byte("two")}); err != nil {
		t.Fatal(err)
	}
	sub, err := tr.Join(ctx, "t", "g")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	recs, err := sub.Poll(ctx, 10)
	if err != nil || len(recs) != 2 || string(recs[0].Payload) != "one" || string(recs[1].Payload) != "two" {
		t.Fatalf("poll: %d records, %v", len(recs), err)
	}
	l := sub.(*subscription).sess.cur
	if l == nil || l.sdkMu == nil || l.socket == nil {
		t.Fatal("the subscription's link has no socket and SDK mutex: it polled through the SDK")
	}
	// The mutex found is the SDK client's own: while it is held, an SDK
	// call on the link waits. (A loopback ping takes well under the wait
	// below, so another mutex would let it through; a slow machine can
	// only make this check pass, never fail.)
	l.sdkMu.Lock()
	pinged := make(chan error, 1)
	go func() { pinged <- l.client.Ping() }()
	select {
	case err := <-pinged:
		l.sdkMu.Unlock()
		t.Fatalf("an SDK call ran while its mutex was held: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	l.sdkMu.Unlock()
	if err := <-pinged; err != nil {
		t.Fatal(err)
	}
}

// FuzzDecodePoll feeds arbitrary bytes to the poll codec: it must never
// panic, fail only with errMalformedReply, return records that lie within
// the reply, and never more than the limit.
func FuzzDecodePoll(f *testing.F) {
	f.Add(pollReply(f, 5, []string{"a", "bb", "ccc"}, []wire.Headers{{{Key: "k", Value: wire.StringValue("v")}}, nil, {{Key: "k", Value: wire.Uint8Value(1)}}}))
	f.Add([]byte{})
	f.Add(make([]byte, 16))
	f.Fuzz(checkDecodePoll)
}

// checkDecodePoll is FuzzDecodePoll's harness.
func checkDecodePoll(t *testing.T, reply []byte) {
	tr := &Transport{cfg: Config{}.resolve()}
	got, _, _, err := tr.decodePoll(nil, 3, reply, 0, 4)
	if err != nil && !errors.Is(err, errMalformedReply) {
		t.Fatalf("unexpected error %v", err)
	}
	if len(got) > 4 {
		t.Fatalf("%d records over a limit of 4", len(got))
	}
}
