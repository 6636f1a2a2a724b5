package wire_test

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/lasergo/laser/wire"
)

// The expected bytes below were assembled by hand from the reference
// encoder's rules (externally tagged enum as map(1), struct fields as text
// keys in declaration order, a plain byte vector as an array of uints,
// shortest floats), not produced by this package.
const memoryID = "01KWM3K3XEP3NP5TN850J17YBP"

func TestMemoryRecordBytesMatchTheReferenceEncoding(t *testing.T) {
	cases := []struct {
		name string
		rec  wire.MemoryRecord
		hex  string
	}{
		{"item", wire.MemoryRecord{Op: wire.MemoryItem, ID: memoryID, Kind: "fact", Body: []byte{1, 32, 255}},
			"a1644974656da3626964781a30314b574d334b33584550334e5035544e3835304a3137594250646b696e64646661637464626f64798301182018ff"},
		{"forget", wire.MemoryRecord{Op: wire.MemoryForget, ID: memoryID},
			"a166466f72676574a166746172676574781a30314b574d334b33584550334e5035544e3835304a3137594250"},
		{"feedback", wire.MemoryRecord{Op: wire.MemoryFeedback, ID: memoryID, Weight: 1.5},
			"a168466565646261636ba266746172676574781a30314b574d334b33584550334e5035544e3835304a313759425066776569676874f93e00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.rec.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(got) != c.hex {
				t.Fatalf("bytes\n got %x\nwant %s", got, c.hex)
			}
			back, err := wire.DecodeMemoryRecord(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&c.rec, back); diff != "" {
				t.Fatalf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMemoryRecordBodyDecodesFromAByteString(t *testing.T) {
	// {"Item": {"id": "a", "kind": "fact", "body": h'0102'}}
	b, _ := hex.DecodeString("a1644974656da36269646161646b696e64646661637464626f6479420102")
	rec, err := wire.DecodeMemoryRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(rec.Body) != "\x01\x02" || rec.ID != "a" {
		t.Fatalf("got %+v", rec)
	}
}

func TestMemoryRecordRejectsMissingFieldsAndUnknownVariants(t *testing.T) {
	for name, h := range map[string]string{
		"item without body": "a1644974656da26269646161646b696e646466616374",
		"unknown variant":   "a16450696e67a0",
		"two variants":      "a2",
	} {
		b, _ := hex.DecodeString(h)
		if _, err := wire.DecodeMemoryRecord(b); !errors.Is(err, wire.ErrDecode) {
			t.Errorf("%s: err = %v, want a decode error", name, err)
		}
	}
}

func TestFoldSnapshotBytesMatchTheReferenceEncoding(t *testing.T) {
	var conv wire.ID
	for i := range conv {
		conv[i] = byte(i)
	}
	s := wire.FoldSnapshot{Conversation: conv, AsOf: map[uint32]uint64{1: 9, 0: 41}, State: []byte("{}")}
	got, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	const want = "a36c636f6e766572736174696f6e50000102030405060708090a0b0c0d0e0f6561735f6f66a20018290109657374617465427b7d"
	if hex.EncodeToString(got) != want {
		t.Fatalf("bytes\n got %x\nwant %s", got, want)
	}
	back, err := wire.DecodeFoldSnapshot(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&s, back); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

func TestFoldSnapshotResumesOnePastTheFoldedOffset(t *testing.T) {
	s := wire.FoldSnapshot{AsOf: map[uint32]uint64{0: 899, 2: 41}}
	for p, want := range map[uint32]uint64{0: 900, 2: 42, 1: 0} {
		if got := s.ResumeOffset(p); got != want {
			t.Errorf("ResumeOffset(%d) = %d, want %d", p, got, want)
		}
	}
}
