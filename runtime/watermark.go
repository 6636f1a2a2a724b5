package runtime

import "sync/atomic"

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
	last      uint64 // offset of the newest record taken or skipped
	seen      bool   // a record was taken or skipped
	// prefix is the offset of the newest record below which every taken
	// record is finished (valid once hasPrefix); the mark is prefix, held
	// below the lowest pin.
	prefix    uint64
	hasPrefix bool
	// pins hold the mark below records that were skipped rather than
	// taken (a hot key's backlog, read again from the log later).
	pins map[*markPin]struct{}
	// mark is the last mark reported (valid once marked).
	mark   uint64
	marked bool
	// detached is set once the partition was read again from an earlier
	// offset (it was revoked and assigned back): the records taken before
	// still finish, but their marks no longer commit anything.
	detached bool
	// lost is set, by the committer, once a commit of a mark these marks
	// reported was refused because the partition moved to another member:
	// they report nothing more, the next record of the partition starts
	// it afresh, and its backlogs end (their records are the new owner's).
	lost atomic.Bool
}

type markEntry struct {
	offset uint64
	done   bool
}

// markPin holds its partition's mark below offset at: the records from
// at on that were skipped are not finished yet.
type markPin struct {
	pm *partitionMarks
	at uint64
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
	pm := w.see(pos)
	pm.ents = append(pm.ents, markEntry{offset: pos.Offset})
	return markTicket{pm: pm, seq: pm.base + uint64(len(pm.ents)-1)}
}

// see moves the partition of pos on to pos, starting it afresh when pos
// is at or below what it saw (a rebalance handed it back).
func (w *watermark) see(pos Position) *partitionMarks {
	pm := w.partition(pos.Partition)
	if pm.seen && (pos.Offset <= pm.last || pm.lost.Load()) {
		pm.detached = true
		pm = &partitionMarks{partition: pos.Partition}
		w.parts[pos.Partition] = pm
	}
	pm.seen, pm.last = true, pos.Offset
	return pm
}

// rewinds reports whether pos would start its partition afresh.
func (w *watermark) rewinds(pos Position) bool {
	pm := w.parts[pos.Partition]
	return pm != nil && pm.seen && (pos.Offset <= pm.last || pm.lost.Load())
}

// current returns the marks pos's partition is on now, or nil.
func (w *watermark) current(p uint32) *partitionMarks { return w.parts[p] }

// skip moves the partition of pos on without taking the record, and pins
// the mark below it: the record is handled later, out of band, and the
// pin moves on as it is (movePin). Records of the partition must be
// skipped in log order, as they are taken.
func (w *watermark) skip(pos Position) *markPin {
	pm := w.see(pos)
	p := &markPin{pm: pm, at: pos.Offset}
	if pm.pins == nil {
		pm.pins = make(map[*markPin]struct{})
	}
	pm.pins[p] = struct{}{}
	return p
}

// movePin moves p up to at (everything below it of p's records is
// finished) and reports the partition's new mark when it moved.
func (w *watermark) movePin(p *markPin, at uint64) (Position, bool) {
	p.at = max(p.at, at)
	return p.pm.report()
}

// unpin drops p and reports the partition's new mark when it moved.
func (w *watermark) unpin(p *markPin) (Position, bool) {
	delete(p.pm.pins, p)
	return p.pm.report()
}

// finish marks t's record finished and reports the partition's new mark
// when it moved.
func (w *watermark) finish(t markTicket) (Position, bool) {
	pm := t.pm
	pm.ents[t.seq-pm.base].done = true
	moved := false
	for pm.first < len(pm.ents) && pm.ents[pm.first].done {
		pm.prefix, pm.hasPrefix = pm.ents[pm.first].offset, true
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
	if !moved {
		return Position{}, false
	}
	return pm.report()
}

// report returns the partition's mark when it moved past the last one
// reported: the finished prefix, held below the lowest pin.
func (pm *partitionMarks) report() (Position, bool) {
	if pm.detached || pm.lost.Load() || !pm.hasPrefix {
		return Position{}, false
	}
	// Every record up to last is ticketed or pinned: with no ticket
	// unfinished, only the pins hold the mark (a backlog-only tail).
	mark := pm.last
	if pm.first < len(pm.ents) {
		mark = pm.ents[pm.first].offset - 1
	}
	for p := range pm.pins {
		if p.at <= mark {
			if p.at == 0 {
				return Position{}, false
			}
			mark = p.at - 1
		}
	}
	if pm.marked && mark <= pm.mark {
		return Position{}, false
	}
	pm.mark, pm.marked = mark, true
	return Position{Partition: pm.partition, Offset: mark}, true
}
