package wire

import (
	"math"
	"slices"
)

// FoldSnapshot is a folded conversation state and the log positions it
// covers, byte-identical to the reference's snapshot record: {"conversation":
// 16-byte id, "as_of": {partition: offset}, "state": bytes}, the map keyed by
// integers in ascending order.
type FoldSnapshot struct {
	Conversation ID
	// AsOf maps a partition to the last offset folded into State, inclusive.
	AsOf map[uint32]uint64
	// State is the folded state, opaque to the wire (JSON by convention).
	State []byte
}

// ResumeOffset is where a fold resumes on partition: one past the last folded
// offset, or 0 for a partition the snapshot does not cover.
func (s *FoldSnapshot) ResumeOffset(partition uint32) uint64 {
	off, ok := s.AsOf[partition]
	if !ok {
		return 0
	}
	if off == math.MaxUint64 {
		return off
	}
	return off + 1
}

// Marshal returns the snapshot's canonical CBOR.
func (s *FoldSnapshot) Marshal() ([]byte, error) {
	b := make([]byte, 0, 64+12*len(s.AsOf)+len(s.State))
	b = append(b, majorMap|3)
	b = appendBytes(appendText(b, "conversation"), s.Conversation[:])
	b = appendHead(appendText(b, "as_of"), majorMap, uint64(len(s.AsOf)))
	parts := make([]uint32, 0, len(s.AsOf))
	for p := range s.AsOf {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		b = appendHead(b, majorUint, uint64(p))
		b = appendHead(b, majorUint, s.AsOf[p])
	}
	b = appendBytes(appendText(b, "state"), s.State)
	return b, nil
}

// DecodeFoldSnapshot decodes one snapshot, rejecting trailing bytes.
func DecodeFoldSnapshot(b []byte) (*FoldSnapshot, error) {
	return decodeAs[FoldSnapshot](b, "fold snapshot")
}

func (s *FoldSnapshot) decode(r *reader) error { return decodeSnapshotFields(r, s) }

// snapshotFields are the snapshot record's fields in wire order.
var snapshotFields = recordFields[FoldSnapshot]{
	{"conversation", required, readSnapshotConversation},
	{"as_of", required, readAsOf},
	{"state", required, readSnapshotState},
}

func readSnapshotConversation(r *reader, s *FoldSnapshot) (err error) {
	s.Conversation, err = r.id()
	return err
}

func readSnapshotState(r *reader, s *FoldSnapshot) (err error) {
	s.State, err = r.binBytes()
	return err
}

// readAsOf reads the partition-to-offset map; a partition listed twice is
// ErrDuplicateKey.
func readAsOf(r *reader, s *FoldSnapshot) error {
	n, indef, err := r.container(majorMap)
	if err != nil {
		return err
	}
	s.AsOf = make(map[uint32]uint64)
	for i := uint64(0); r.next(i, n, indef); i++ {
		p, err := r.uint(math.MaxUint32)
		if err != nil {
			return err
		}
		off, err := r.uint(math.MaxUint64)
		if err != nil {
			return err
		}
		if _, dup := s.AsOf[uint32(p)]; dup {
			return r.errf("%v: partition %d", ErrDuplicateKey, p)
		}
		s.AsOf[uint32(p)] = off
	}
	r.leave()
	return nil
}
