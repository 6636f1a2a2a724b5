package wire_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/lasergo/laser/wire"
)

func TestMetadataGetHasSetDelete(t *testing.T) {
	var m wire.Metadata
	if m.Has("a") || m.Get("a").Kind() != wire.ValueNull {
		t.Fatal("nil metadata holds an entry")
	}
	m.Set("run", wire.StrValue("r1"))
	m.Set("agdx.fence", wire.UintValue(3))
	m.Set("b", wire.NullValue())
	m.Set("run", wire.StrValue("r2")) // replaces, does not add
	if len(m) != 3 {
		t.Fatalf("len = %d, want 3: %v", len(m), m)
	}
	if s, _ := m.Get("run").AsStr(); s != "r2" {
		t.Fatalf("run = %q, want r2", s)
	}
	if !m.Has("b") || m.Get("b").Kind() != wire.ValueNull {
		t.Fatal("a Null entry must be there")
	}
	for i, want := range []string{"agdx.fence", "b", "run"} {
		if m[i].Key != want {
			t.Fatalf("entry %d is %q, want %q: Set keeps keys in bytewise order", i, m[i].Key, want)
		}
	}
	m.Delete("b")
	m.Delete("absent")
	if m.Has("b") || len(m) != 2 {
		t.Fatalf("after Delete: %v", m)
	}
}

// TestMetadataEncodesInKeyOrderWhateverTheListOrder checks that a list built
// out of order encodes exactly as the sorted one, and decodes sorted.
func TestMetadataEncodesInKeyOrderWhateverTheListOrder(t *testing.T) {
	sorted := wire.Metadata{{Key: "a", Value: wire.IntValue(1)}, {Key: "bb", Value: wire.StrValue("x")}, {Key: "c", Value: wire.BoolValue(true)}}
	shuffled := wire.Metadata{sorted[2], sorted[0], sorted[1]}
	want, err := sorted.MarshalCBOR()
	if err != nil {
		t.Fatal(err)
	}
	got, err := shuffled.MarshalCBOR()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("shuffled list encodes as %x, sorted as %x", got, want)
	}
	if shuffled[0].Key != "c" {
		t.Fatal("encoding reordered the caller's list")
	}
	if !shuffled.Equal(sorted) || !sorted.Equal(shuffled) {
		t.Fatal("Equal depends on order")
	}

	// A map written out of order by another encoder decodes sorted: c, a.
	var back wire.Metadata
	if err := back.UnmarshalCBOR([]byte{0xa2, 0x61, 'c', 0x01, 0x61, 'a', 0x02}); err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0].Key != "a" || back[1].Key != "c" {
		t.Fatalf("decoded %v, want a then c", back)
	}
}

func TestMetadataDuplicateKeysAreRefused(t *testing.T) {
	dup := wire.Metadata{{Key: "k", Value: wire.IntValue(1)}, {Key: "j", Value: wire.IntValue(0)}, {Key: "k", Value: wire.IntValue(2)}}
	if _, err := dup.MarshalCBOR(); !errors.Is(err, wire.ErrDuplicateKey) {
		t.Fatalf("encoding a duplicate key: %v, want ErrDuplicateKey", err)
	}
	rec := wire.IDFromUint128(0, 1)
	env := &wire.Envelope{Kind: wire.KindEvent, Record: &rec, Conversation: wire.IDFromUint128(0, 2), Source: "a", Body: []byte("b"), Metadata: dup}
	if err := wire.Validate(env); !errors.Is(err, wire.ErrDuplicateKey) {
		t.Fatalf("validating a duplicate key: %v, want ErrDuplicateKey", err)
	}
	if _, err := env.Marshal(); !errors.Is(err, wire.ErrDuplicateKey) {
		t.Fatalf("marshalling a duplicate key: %v, want ErrDuplicateKey", err)
	}
	// {"k": 1, "k": 2} on the wire.
	var back wire.Metadata
	if err := back.UnmarshalCBOR([]byte{0xa2, 0x61, 'k', 0x01, 0x61, 'k', 0x02}); !errors.Is(err, wire.ErrDuplicateKey) {
		t.Fatalf("decoding a duplicate key: %v, want ErrDuplicateKey", err)
	}
}

// TestDecodingAFencedEnvelopeAllocatesOnlyItsTextCopy checks that an
// envelope with an entry or two of metadata decodes into an EnvelopeBuffer
// with one allocation, the copy its text fields share.
func TestDecodingAFencedEnvelopeAllocatesOnlyItsTextCopy(t *testing.T) {
	rec := wire.IDFromUint128(0, 1)
	env := &wire.Envelope{Kind: wire.KindEvent, Record: &rec, Conversation: wire.IDFromUint128(0, 2), Source: "a", Body: []byte("b"),
		Metadata: wire.Metadata{{Key: wire.MetaFence, Value: wire.UintValue(7)}, {Key: wire.MetaRun, Value: wire.StrValue("r")}}}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var buf wire.EnvelopeBuffer
	allocs := testing.AllocsPerRun(100, func() {
		got, err := buf.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := got.Fence(); !ok || f != 7 {
			t.Fatalf("fence %d %v", f, ok)
		}
	})
	if allocs > 1 {
		t.Fatalf("decoding allocates %v times, want 1", allocs)
	}
}
