package iggy

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/wire"
)

func TestHeaderEntriesMatchTheAGDXLayout(t *testing.T) {
	id := wire.IDFromUint128(0x0102030405060708, 0x090a0b0c0d0e0f10)
	h := wire.Headers{
		{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(1)},
		{Key: wire.HeaderContentType, Value: wire.Uint8Value(1)},
		{Key: wire.HeaderConversationID, Value: wire.Uint128Value(id)},
		{Key: wire.HeaderTarget, Value: wire.StringValue("target-agent")},
	}
	entries, err := headerEntries(h)
	if err != nil {
		t.Fatal(err)
	}
	got := iggcon.GetHeadersBytes(entries)
	// Each entry: u8 key kind (String), u32 key length, key, u8 value kind,
	// u32 value length, value.
	var want []byte
	for _, e := range h {
		want = append(want, byte(wire.HeaderKindString), byte(len(e.Key)), 0, 0, 0)
		want = append(want, e.Key...)
		want = append(want, byte(e.Value.Kind), byte(len(e.Value.Data)), 0, 0, 0)
		want = append(want, e.Value.Data...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded headers\n got %x\nwant %x", got, want)
	}
	back, err := appendHeaders(nil, got)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(h) {
		t.Fatalf("decoded %d headers, want %d", len(back), len(h))
	}
	for i := range h {
		if back[i].Key != h[i].Key || back[i].Value.Kind != h[i].Value.Kind || !bytes.Equal(back[i].Value.Data, h[i].Value.Data) {
			t.Fatalf("header %d = %+v, want %+v", i, back[i], h[i])
		}
	}
	if n := countHeaders(got); n != len(h) {
		t.Fatalf("countHeaders = %d, want %d", n, len(h))
	}
}

func TestHeaderEntriesRejectWhatIggyCannotCarry(t *testing.T) {
	bad := []wire.Header{
		{Key: "", Value: wire.StringValue("x")},
		{Key: "k", Value: wire.HeaderValue{Kind: 0, Data: []byte{1}}},
		{Key: "k", Value: wire.HeaderValue{Kind: 16, Data: []byte{1}}},
		{Key: "k", Value: wire.StringValue("")},
		{Key: "k", Value: wire.HeaderValue{Kind: wire.HeaderKindUint32, Data: []byte{1, 2}}},
		{Key: "k", Value: wire.HeaderValue{Kind: wire.HeaderKindRaw, Data: make([]byte, 256)}},
	}
	for _, h := range bad {
		if _, err := headerEntries(wire.Headers{h}); !errors.Is(err, ErrBadHeader) {
			t.Errorf("header %+v: err = %v, want ErrBadHeader", h, err)
		}
	}
}

func TestAppendHeadersRejectsMalformedBytes(t *testing.T) {
	valid := iggcon.GetHeadersBytes([]iggcon.HeaderEntry{{
		Key:   iggcon.HeaderKey{Kind: iggcon.String, Value: []byte("k")},
		Value: iggcon.HeaderValue{Kind: iggcon.Uint8, Value: []byte{7}},
	}})
	for name, b := range map[string][]byte{
		"cut short":        valid[:len(valid)-1],
		"kind zero":        append([]byte{0}, valid[1:]...),
		"fixed size wrong": append(append([]byte{}, valid[:7]...), 9, 2, 0, 0, 0, 1, 2),
		"missing value":    valid[:6],
	} {
		if _, err := appendHeaders(nil, b); !errors.Is(err, ErrBadHeader) {
			t.Errorf("%s: err = %v, want ErrBadHeader", name, err)
		}
	}
}

// TestHeaderWalkAgreesWithTheSDKOnFixedWidthKeys pins the key rule against
// the SDK the consumer's peers run: for every kind, a key of its fixed
// width, one byte less and one more, the transport's walk accepts exactly
// what iggcon.DeserializeHeaders accepts. The Iggy server stores headers
// unchecked, so this is what decides whether such a record reaches a
// handler (FuzzDecodeHeaders found the two walks disagreeing).
func TestHeaderWalkAgreesWithTheSDKOnFixedWidthKeys(t *testing.T) {
	for kind := wire.HeaderKindRaw; kind <= wire.HeaderKindDouble; kind++ {
		widths := []int{1, 7, 9}
		if n := kind.FixedSize(); n != 0 {
			widths = []int{n - 1, n, n + 1}
		}
		for _, n := range widths {
			if n == 0 {
				continue
			}
			b := append([]byte{byte(kind), byte(n), 0, 0, 0}, bytes.Repeat([]byte{'k'}, n)...)
			b = append(b, byte(wire.HeaderKindString), 1, 0, 0, 0, 'v')
			_, sdkErr := iggcon.DeserializeHeaders(b)
			_, ourErr := appendHeaders(nil, b)
			if (sdkErr == nil) != (ourErr == nil) {
				t.Errorf("%s key of %d bytes: SDK %v, we %v", kind, n, sdkErr, ourErr)
			}
			if fixed := kind.FixedSize(); ourErr == nil && fixed != 0 && n != fixed {
				t.Errorf("%s key of %d bytes accepted", kind, n)
			}
		}
	}
}

// TestIncomingReadsHeadersInPlace pins that converting a batch decodes no
// headers: each record's headers are a view of the polled bytes, so the
// records slice is the only allocation, whatever keys the records carry.
func TestIncomingReadsHeadersInPlace(t *testing.T) {
	msgs := make([]iggcon.IggyMessage, 50)
	for i := range msgs {
		h := wire.Headers{
			{Key: "x-tenant", Value: wire.StringValue("acme")},
			{Key: wire.HeaderContentType, Value: wire.Uint8Value(3)},
		}
		if i == 7 {
			h[0].Key = "x-other" // a record with other keys breaks no one's
		}
		b, err := appendHeaderBytes(nil, h)
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = iggcon.IggyMessage{Header: iggcon.MessageHeader{Offset: uint64(i)}, Payload: []byte("p"), UserHeaders: b}
	}
	tr := &Transport{cfg: Config{}.resolve()}
	out, _ := tr.incoming(nil, 0, msgs, 0, len(msgs))
	for i, r := range out {
		want := "x-tenant"
		if i == 7 {
			want = "x-other"
		}
		h := r.Headers.Decode()
		if len(h) != 2 || h[0].Key != want || h[1].Key != wire.HeaderContentType {
			t.Fatalf("record %d headers %+v", i, r.Headers)
		}
	}
	// The records slice alone; a list decoded per record would make it 51.
	if n := testing.AllocsPerRun(20, func() { tr.incoming(nil, 0, msgs, 0, len(msgs)) }); n > 1 {
		t.Fatalf("converting %d records allocates %v times", len(msgs), n)
	}
}

// TestIncomingKeepsEachRecordsHeadersWhenCountsDiffer converts a batch
// whose records carry fewer, then more, then no headers than the first:
// the headers array is sized by the first record, so a later, larger one
// moves it, and every record must still see exactly its own headers.
func TestIncomingKeepsEachRecordsHeadersWhenCountsDiffer(t *testing.T) {
	counts := []int{2, 1, 5, 0, 3, 2}
	msgs := make([]iggcon.IggyMessage, len(counts))
	for i, n := range counts {
		var h wire.Headers
		for j := range n {
			h = append(h, wire.Header{Key: fmt.Sprintf("k%d", j), Value: wire.StringValue(fmt.Sprintf("r%d-%d", i, j))})
		}
		b, err := appendHeaderBytes(nil, h)
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = iggcon.IggyMessage{Header: iggcon.MessageHeader{Offset: uint64(i)}, Payload: []byte("p"), UserHeaders: b}
	}
	tr := &Transport{cfg: Config{}.resolve()}
	out, _ := tr.incoming(nil, 0, msgs, 0, len(msgs))
	for i, r := range out {
		if r.Headers.Len() != counts[i] {
			t.Fatalf("record %d has %d headers, want %d", i, r.Headers.Len(), counts[i])
		}
		for j, h := range r.Headers.Decode() {
			if h.Key != fmt.Sprintf("k%d", j) || string(h.Value.Data) != fmt.Sprintf("r%d-%d", i, j) {
				t.Fatalf("record %d header %d is %s=%s", i, j, h.Key, h.Value.Data)
			}
		}
	}
}

// appendHeaders decodes encoded user headers onto dst, through
// wire.ParseHeaders, for the tests that compare lists.
func appendHeaders(dst wire.Headers, b []byte) (wire.Headers, error) {
	e, err := wire.ParseHeaders(b)
	if err != nil {
		return dst, err
	}
	return append(dst, e.Decode()...), nil
}

// countHeaders returns how many entries encoded user headers hold;
// malformed bytes count 0.
func countHeaders(b []byte) int {
	e, err := wire.ParseHeaders(b)
	if err != nil {
		return 0
	}
	return e.Len()
}
