package wire

import (
	"bytes"
	goruntime "runtime"
	"testing"
)

func TestIndefiniteTextIsDecodedWhole(t *testing.T) {
	// An event whose source is sent as the chunks "abcd" and "xy": the
	// reference reads "abcdxy", and so must re-encoding and signatures.
	env := &Envelope{Kind: KindEvent, Conversation: IDFromUint128(0, 2), Source: "abcdxy", Body: []byte("b")}
	rec := IDFromUint128(0, 1)
	env.Record = &rec
	canonical, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	definite := []byte("\x66source\x66abcdxy")
	chunked := []byte("\x66source\x7f\x64abcd\x62xy\xff")
	i := bytes.Index(canonical, definite)
	if i < 0 {
		t.Fatal("source not found in the encoding")
	}
	input := append(append(append([]byte(nil), canonical[:i]...), chunked...), canonical[i+len(definite):]...)
	got, err := DecodeEnvelope(input)
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != "abcdxy" {
		t.Fatalf("source %q, want the joined chunks", got.Source)
	}
	again, err := got.Marshal()
	if err != nil || !bytes.Equal(again, canonical) {
		t.Fatalf("re-encoding %x, want the canonical %x (%v)", again, canonical, err)
	}
}

func TestAClaimedHugeMetadataListIsNotPreallocated(t *testing.T) {
	// metadata {"k": [1M items claimed, the first one invalid]}, followed
	// by a megabyte of filler so the claim does not exceed the input: the
	// decoder must fail without reserving room for a million values.
	env := &Envelope{Kind: KindEvent, Conversation: IDFromUint128(0, 2), Source: "a", Body: []byte("b"),
		Metadata: Metadata{{Key: "k", Value: ListValue(IntValue(1))}}}
	rec := IDFromUint128(0, 1)
	env.Record = &rec
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("\x61k\x81\x01"))
	if i < 0 {
		t.Fatal("list not found in the encoding")
	}
	hostile := append(append([]byte(nil), b[:i+2]...), 0x9a, 0x00, 0x10, 0x00, 0x00, 0xa0) // a map is no Value
	hostile = append(hostile, b[i+4:]...)
	hostile = append(hostile, make([]byte, 1<<20)...)
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	if _, err := DecodeEnvelope(hostile); err == nil {
		t.Fatal("a truncated list decoded")
	}
	goruntime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("decoding allocated %d bytes for a list claiming 1M items", grew)
	}
}
