package runtime

// watermark tracks, per partition, the records a consumer took in log order
// and which of them are finished (handled, skipped, dropped or parked), when
// they finish in any order. A partition's mark is the offset of its newest
// record below which every taken record is finished: the only offset that
// may be committed, so a crash redelivers at most the records above it, and
// never skips one that was not finished. It is not safe for concurrent use;
// the PerConversation scheduler guards it with its lock.
type watermark struct {
	parts map[uint32]*partitionMarks
}

// partitionMarks is one partition's taken records from the oldest
// unfinished one on: ents[first:] in offset order, ents[i] having sequence
// number base+i.
type partitionMarks struct {
	partition uint32
	ents      []markEntry
	first     int
	base      uint64
	last      uint64 // offset of the newest taken record
	// detached is set once the partition was read again from an earlier
	// offset (it was revoked and assigned back): the records taken before
	// still finish, but their marks no longer commit anything.
	detached bool
}

type markEntry struct {
	offset uint64
	done   bool
}

// markTicket names one taken record for finish.
type markTicket struct {
	pm  *partitionMarks
	seq uint64
}

func newWatermark() watermark { return watermark{parts: make(map[uint32]*partitionMarks)} }

// partition returns p's marks, creating them on first use.
func (w *watermark) partition(p uint32) *partitionMarks {
	pm := w.parts[p]
	if pm == nil {
		pm = &partitionMarks{partition: p}
		w.parts[p] = pm
	}
	return pm
}

// span is how many records of p were taken past its mark.
func (w *watermark) span(p uint32) int {
	pm := w.parts[p]
	if pm == nil {
		return 0
	}
	return len(pm.ents) - pm.first
}

// take registers the next record of its partition. Records of a partition
// must be taken in log order; one at or below the newest taken offset
// starts the partition afresh, as a rebalance that handed it back does.
func (w *watermark) take(pos Position) markTicket {
	pm := w.partition(pos.Partition)
	if len(pm.ents) > 0 || pm.base > 0 {
		if pos.Offset <= pm.last {
			pm.detached = true
			pm = &partitionMarks{partition: pos.Partition}
			w.parts[pos.Partition] = pm
		}
	}
	pm.last = pos.Offset
	pm.ents = append(pm.ents, markEntry{offset: pos.Offset})
	return markTicket{pm: pm, seq: pm.base + uint64(len(pm.ents)-1)}
}

// finish marks t's record finished and reports the partition's new mark
// when it moved.
func (w *watermark) finish(t markTicket) (Position, bool) {
	pm := t.pm
	pm.ents[t.seq-pm.base].done = true
	moved := false
	var mark uint64
	for pm.first < len(pm.ents) && pm.ents[pm.first].done {
		mark = pm.ents[pm.first].offset
		pm.first++
		moved = true
	}
	// Drop the finished prefix once it is most of the slice, so the slice
	// holds about the records past the mark.
	if pm.first > 64 && pm.first*2 >= len(pm.ents) {
		n := copy(pm.ents, pm.ents[pm.first:])
		pm.ents = pm.ents[:n]
		pm.base += uint64(pm.first)
		pm.first = 0
	}
	if !moved || pm.detached {
		return Position{}, false
	}
	return Position{Partition: pm.partition, Offset: mark}, true
}
