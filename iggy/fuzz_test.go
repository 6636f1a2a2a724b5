package iggy

import (
	"bytes"
	"errors"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/internal/fuzzcheck"
	"github.com/lasergo/laser/wire"
)

// FuzzDecodeHeaders feeds arbitrary bytes to the user-header decoder the
// consumer runs on every polled message. It must never panic, must fail
// only with ErrBadHeader, must count what it decodes, must agree with the
// SDK's own decoder on everything it accepts, and what it decodes must
// encode and decode back to the same headers.
func FuzzDecodeHeaders(f *testing.F) {
	for _, b := range decodeHeadersSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(checkDecodeHeaders)
}

// decodeHeadersSeeds are headers as the SDK encodes them, each also cut
// short, and hand-made malformed entries.
func decodeHeadersSeeds(tb testing.TB) [][]byte {
	id := wire.IDFromUint128(0x0102030405060708, 0x090a0b0c0d0e0f10)
	target := wire.AgentID("billing")
	fence := uint64(7)
	prov := wire.Provenance{Conversation: id, Agent: "planner", IdempotencyKey: "k-1", Fence: &fence}
	provHeaders, err := prov.Headers()
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, h := range []wire.Headers{
		wire.EnvelopeHeaders(&wire.Envelope{Conversation: id, Target: &target}, wire.ContentJSON),
		provHeaders,
		{{Key: "k", Value: wire.HeaderValue{Kind: wire.HeaderKindDouble, Data: make([]byte, 8)}}},
	} {
		entries, err := headerEntries(h)
		if err != nil {
			tb.Fatal(err)
		}
		b := iggcon.GetHeadersBytes(entries)
		out = append(out, b, b[:len(b)-1])
	}
	return append(out,
		[]byte{},
		[]byte{2, 1, 0, 0, 0, 'k', 16, 1, 0, 0, 0, 'v'},        // unknown value kind
		[]byte{2, 1, 0, 0, 0, 'k', 9, 2, 0, 0, 0, 1, 2},        // a u8 of two bytes
		[]byte{2, 0, 1, 0, 0},                                  // a key longer than the input
		[]byte{9, 1, 0, 0, 0, 7, 2, 3, 0, 0, 0, 'a', 'b', 'c'}, // a u8 key
		[]byte{2, 255, 255, 255, 255, 'k', 2, 1, 0, 0, 0, 'v'}, // a 4 GiB key length
	)
}

// checkDecodeHeaders is FuzzDecodeHeaders' harness.
func checkDecodeHeaders(t *testing.T, data []byte) {
	h, err := appendHeaders(nil, data)
	if err != nil {
		if !errors.Is(err, ErrBadHeader) {
			t.Fatalf("decode error %v does not match ErrBadHeader", err)
		}
		return
	}
	if n := countHeaders(data); n != len(h) {
		t.Fatalf("countHeaders = %d, decoded %d headers", n, len(h))
	}
	sdk, err := iggcon.DeserializeHeaders(data)
	if err != nil {
		t.Fatalf("we accept headers the SDK refuses (%v): %x", err, data)
	}
	if len(sdk) != len(h) {
		t.Fatalf("SDK decodes %d headers, we decode %d", len(sdk), len(h))
	}
	for i, e := range sdk {
		if string(e.Key.Value) != h[i].Key || wire.HeaderKind(e.Value.Kind) != h[i].Value.Kind || !bytes.Equal(e.Value.Value, h[i].Value.Data) {
			t.Fatalf("header %d: SDK %v, we %+v", i, e, h[i])
		}
	}
	entries, err := headerEntries(h)
	if err != nil {
		t.Fatalf("decoded headers do not encode: %v", err)
	}
	ours, err := appendHeaderBytes(nil, h)
	if err != nil {
		t.Fatalf("decoded headers do not encode: %v", err)
	}
	if sdkBytes := iggcon.GetHeadersBytes(entries); !bytes.Equal(ours, sdkBytes) || len(ours) != headerBytesLen(h) {
		t.Fatalf("we encode %x, the SDK %x", ours, sdkBytes)
	}
	back, err := appendHeaders(nil, ours)
	if err != nil {
		t.Fatalf("re-encoded headers do not decode: %v", err)
	}
	if len(back) != len(h) {
		t.Fatalf("round trip kept %d of %d headers", len(back), len(h))
	}
	for i := range h {
		if back[i].Key != h[i].Key || back[i].Value.Kind != h[i].Value.Kind || !bytes.Equal(back[i].Value.Data, h[i].Value.Data) {
			t.Fatalf("header %d: round trip %+v, want %+v", i, back[i], h[i])
		}
	}
}

// TestFuzzHarnessesTakeAnyInput runs this package's fuzz harnesses over
// fuzzcheck's hostile inputs as a plain test, so a harness that cannot
// fuzz fails every go test run.
func TestFuzzHarnessesTakeAnyInput(t *testing.T) {
	t.Run("FuzzDecodeHeaders", func(t *testing.T) {
		fuzzcheck.Run(t, fuzzcheck.Inputs(1, decodeHeadersSeeds(t)...), checkDecodeHeaders)
	})
	t.Run("FuzzDecodePoll", func(t *testing.T) {
		seed := pollReply(t, 5, []string{"a", "bb", "ccc"}, []wire.Headers{{{Key: "k", Value: wire.StringValue("v")}}, nil, {{Key: "k", Value: wire.Uint8Value(1)}}})
		fuzzcheck.Run(t, fuzzcheck.Inputs(1, seed), checkDecodePoll)
	})
}
