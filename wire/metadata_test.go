package wire_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
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
	m.Delete("run")
	m.Delete("agdx.fence")
	if m == nil || len(m) != 0 {
		t.Fatalf("deleting every key left %#v, want an empty list (present, encoded as an empty map)", m)
	}
	if b, err := m.MarshalCBOR(); err != nil || !bytes.Equal(b, []byte{0xa0}) {
		t.Fatalf("emptied metadata encodes as %x, %v; want a0", b, err)
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
	if err := wire.Validate(env); !errors.Is(err, wire.ErrInvalid) || !errors.Is(err, wire.ErrDuplicateKey) {
		t.Fatalf("validating a duplicate key: %v, want an Invalid rule failure caused by ErrDuplicateKey", err)
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

// cborMetadata encodes a map of text keys to null, in the order given,
// indefinite-length when indef is set, as a hostile or careless encoder
// might write it.
func cborMetadata(keys []string, indef bool) []byte {
	var b []byte
	if indef {
		b = append(b, 0xbf)
	} else {
		b = append(b, 0xb9, byte(len(keys)>>8), byte(len(keys)))
	}
	for _, k := range keys {
		b = append(b, 0x78, byte(len(k)))
		b = append(b, k...)
		b = append(b, 0xf6)
	}
	if indef {
		b = append(b, 0xff)
	}
	return b
}

// TestAFloodOfDuplicateMetadataKeysFailsAtTheFirst checks that a map of
// one key repeated is refused at its second entry, not after decoding all
// of them: the input is on the log before anything validates it.
func TestAFloodOfDuplicateMetadataKeysFailsAtTheFirst(t *testing.T) {
	keys := make([]string, 50_000)
	for i := range keys {
		keys[i] = "k"
	}
	in := cborMetadata(keys, true)
	allocs := testing.AllocsPerRun(5, func() {
		var m wire.Metadata
		if err := m.UnmarshalCBOR(in); !errors.Is(err, wire.ErrDuplicateKey) {
			t.Fatalf("decoding a flood of one key: %v, want ErrDuplicateKey", err)
		}
	})
	if allocs > 10 {
		t.Fatalf("refusing the flood took %v allocations: the entries were decoded before the check", allocs)
	}
}

// TestLongMetadataOutOfOrderIsCheckedForDuplicates covers maps longer than
// the entry cap written out of key order: decoded sorted, and a key that
// comes back late refused.
func TestLongMetadataOutOfOrderIsCheckedForDuplicates(t *testing.T) {
	var keys []string
	for i := 99; i >= 0; i-- { // descending: every key out of order
		keys = append(keys, fmt.Sprintf("k%02d", i))
	}
	var m wire.Metadata
	if err := m.UnmarshalCBOR(cborMetadata(keys, false)); err != nil {
		t.Fatal(err)
	}
	if len(m) != 100 || m[0].Key != "k00" || m[99].Key != "k99" {
		t.Fatalf("decoded %d entries from %q to %q, want k00..k99 sorted", len(m), m[0].Key, m[len(m)-1].Key)
	}
	// k50 came after the set of keys seen was started, k99 before (it is
	// the first key): both must be in it.
	for _, late := range []string{"k50", "k99"} {
		if err := m.UnmarshalCBOR(cborMetadata(append(slices.Clone(keys), late), false)); !errors.Is(err, wire.ErrDuplicateKey) {
			t.Fatalf("a late duplicate %s in a long unordered map: %v, want ErrDuplicateKey", late, err)
		}
	}
	if err := m.UnmarshalCBOR(cborMetadata([]string{"b", "a", "b"}, false)); !errors.Is(err, wire.ErrDuplicateKey) {
		t.Fatalf("a duplicate in a short unordered map: %v, want ErrDuplicateKey", err)
	}
}

// TestACopiedEnvelopesMetadataStaysApartOnInsertAndDelete checks that a
// decoded envelope copied by value and changed does not change the
// original's entries (they share storage).
func TestACopiedEnvelopesMetadataStaysApartOnInsertAndDelete(t *testing.T) {
	rec := wire.IDFromUint128(0, 1)
	orig := &wire.Envelope{Kind: wire.KindEvent, Record: &rec, Conversation: wire.IDFromUint128(0, 2), Source: "a", Body: []byte("b"),
		Metadata: wire.Metadata{{Key: "m", Value: wire.IntValue(1)}}}
	b, err := orig.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var buf wire.EnvelopeBuffer
	env, err := buf.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	cp := *env
	cp.Metadata.Set("a", wire.IntValue(2)) // sorts before "m"
	if len(env.Metadata) != 1 || env.Metadata[0].Key != "m" {
		t.Fatalf("inserting into a copy changed the original: %v", env.Metadata)
	}
	cp = *env
	cp.Metadata.Delete("m")
	if len(env.Metadata) != 1 || env.Metadata[0].Key != "m" {
		t.Fatalf("deleting from a copy changed the original: %v", env.Metadata)
	}

	// The same for a list with room to spare past its entries.
	built := make(wire.Metadata, 0, 8)
	for _, k := range []string{"a", "c", "e"} {
		built.Set(k, wire.IntValue(1))
	}
	cp2 := built
	cp2.Set("b", wire.IntValue(2))
	if len(built) != 3 || built[0].Key != "a" || built[1].Key != "c" || built[2].Key != "e" {
		t.Fatalf("inserting into a copy changed the original Set-built list: %v", built)
	}
}

func TestMetadataEqualIsSymmetric(t *testing.T) {
	twice := wire.Metadata{{Key: "a", Value: wire.IntValue(1)}, {Key: "a", Value: wire.IntValue(1)}}
	other := wire.Metadata{{Key: "a", Value: wire.IntValue(1)}, {Key: "b", Value: wire.IntValue(1)}}
	if twice.Equal(other) || other.Equal(twice) {
		t.Fatal("lists with different keys compare equal")
	}
	a := wire.Metadata{{Key: "a", Value: wire.IntValue(1)}, {Key: "a", Value: wire.IntValue(1)}, {Key: "b", Value: wire.IntValue(2)}}
	b := wire.Metadata{{Key: "a", Value: wire.IntValue(1)}, {Key: "b", Value: wire.IntValue(2)}, {Key: "b", Value: wire.IntValue(3)}}
	if a.Equal(b) || b.Equal(a) {
		t.Fatal("lists holding different entries compare equal")
	}
	if !other.Equal(wire.Metadata{other[1], other[0]}) {
		t.Fatal("the same entries in another order compare unequal")
	}
}
