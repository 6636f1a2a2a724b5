package runtime

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/lasergo/laser/wire"
)

// TestMessageSlabHandsOutDistinctFreshMessages decodes more records than
// several slabs hold, both shapes interleaved, and keeps every message: a
// slab that handed one out twice, or reused one, would show in an earlier
// message's fields.
func TestMessageSlabHandsOutDistinctFreshMessages(t *testing.T) {
	const n = 3*slabSize + 5
	recs := make([]Incoming, n)
	for i := range recs {
		conv := wire.IDFromUint128(9, uint64(i))
		key := fmt.Sprintf("key-%d", i)
		if i%3 == 0 {
			rec := wire.IDFromUint128(8, uint64(i))
			env := &wire.Envelope{Kind: wire.KindEvent, Record: &rec, Conversation: conv, Source: "planner",
				IdempotencyKey: ptr(wire.IdempotencyKey(key)), Body: []byte(`{}`)}
			payload, err := env.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			recs[i] = Incoming{Position: Position{Offset: uint64(i)}, Headers: wire.MustEncodeHeaders(wire.EnvelopeHeaders(env, wire.ContentJSON)), Payload: payload}
			continue
		}
		headers, err := (&wire.Provenance{Conversation: conv, Agent: "planner", IdempotencyKey: key}).Headers()
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = Incoming{Position: Position{Offset: uint64(i)}, Headers: wire.MustEncodeHeaders(headers), Payload: []byte("plain")}
	}
	var slab messageSlab
	slab.reset(n)
	msgs := make([]*Message, n)
	seen := make(map[*Message]bool, n)
	for i := range recs {
		m, err := slab.decode("t", &recs[i], wire.FeaturesNone)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if seen[m] {
			t.Fatalf("record %d got a message handed out before", i)
		}
		seen[m] = true
		msgs[i] = m
	}
	for i, m := range msgs {
		want := fmt.Sprintf("key-%d", i)
		if m.Position.Offset != uint64(i) || m.Provenance.IdempotencyKey != want || m.Provenance.Conversation != wire.IDFromUint128(9, uint64(i)) {
			t.Errorf("message %d: offset %d key %q conversation %s; want its own record's", i, m.Position.Offset, m.Provenance.IdempotencyKey, m.Provenance.Conversation)
		}
		if (m.Envelope != nil) != (i%3 == 0) {
			t.Errorf("message %d: envelope %v, want one only for the AGDX records", i, m.Envelope != nil)
		}
	}
}

// TestNilMessageSlabAllocatesEachMessage checks DecodeRecord's path: no slab,
// a message of its own each time.
func TestNilMessageSlabAllocatesEachMessage(t *testing.T) {
	headers, err := (&wire.Provenance{Conversation: wire.IDFromUint128(1, 2), Agent: "planner"}).Headers()
	if err != nil {
		t.Fatal(err)
	}
	rec := Incoming{Headers: wire.MustEncodeHeaders(headers), Payload: []byte("x")}
	a, errA := DecodeRecord("t", &rec, wire.FeaturesNone)
	b, errB := DecodeRecord("t", &rec, wire.FeaturesNone)
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if a == b {
		t.Fatal("two decodings share one message")
	}
}

// TestMessageSlabSizesArraysToTheBatch checks that a batch smaller than a
// slab gets one array of exactly its size, so a handed-out message never
// shares its array with room nobody will use.
func TestMessageSlabSizesArraysToTheBatch(t *testing.T) {
	var s messageSlab
	s.reset(3)
	first := takeFresh(&s.plain, &s.want)
	if got := cap(s.plain); got != 2 {
		t.Fatalf("after one of three messages the array has room for %d more, want 2", got)
	}
	takeFresh(&s.plain, &s.want)
	third := takeFresh(&s.plain, &s.want)
	if d := uintptr(unsafe.Pointer(third)) - uintptr(unsafe.Pointer(first)); d != 2*unsafe.Sizeof(plainMessage{}) {
		t.Fatalf("the batch's three messages are not one array (first to third: %d bytes)", d)
	}
	s.reset(0)
	if s.plain != nil || s.agdx != nil {
		t.Fatal("reset(0) kept an array")
	}
}

// TestABacklogTurnSizesTheSlabForWhatItReadAhead pops the turn of a hot
// key whose next records are in its backlog's read-ahead: the turn
// expects them, so the worker's slab allocates their messages together,
// not one allocation per record.
func TestABacklogTurnSizesTheSlabForWhatItReadAhead(t *testing.T) {
	sc := &scheduler{key: byConversation}
	q := &keyQueue{backlog: &keyBacklog{buf: make([]Incoming, 40)}}
	var tr turn
	sc.popTurn(q, &tr)
	if tr.ahead < len(q.backlog.buf) {
		t.Fatalf("a backlog turn expects %d records ahead, want at least %d", tr.ahead, len(q.backlog.buf))
	}
}
