package runtime

import "testing"

func TestWatermarkStaysBelowAnUnfinishedRecord(t *testing.T) {
	w := newWatermark()
	var ts []markTicket
	for off := uint64(10); off < 15; off++ {
		ts = append(ts, w.take(Position{Partition: 3, Offset: off}))
	}
	// 11..14 finish while 10 is still running: nothing may be committed.
	for _, tk := range ts[1:] {
		if p, moved := w.finish(tk); moved {
			t.Fatalf("mark moved to %v while offset 10 is unfinished", p)
		}
	}
	p, moved := w.finish(ts[0])
	if !moved || p != (Position{Partition: 3, Offset: 14}) {
		t.Fatalf("mark %v %v after the oldest finished, want 3:14", p, moved)
	}
}

func TestWatermarkMovesToTheLastRecordOfTheFinishedPrefix(t *testing.T) {
	w := newWatermark()
	a := w.take(Position{Offset: 0})
	b := w.take(Position{Offset: 1})
	c := w.take(Position{Offset: 2})
	if p, _ := w.finish(a); p.Offset != 0 {
		t.Fatalf("mark %d, want 0", p.Offset)
	}
	if _, moved := w.finish(c); moved {
		t.Fatal("mark moved past the unfinished offset 1")
	}
	if p, _ := w.finish(b); p.Offset != 2 {
		t.Fatalf("mark %d, want 2", p.Offset)
	}
	if w.span(0) != 0 {
		t.Fatalf("span %d with everything finished", w.span(0))
	}
}

func TestWatermarkPartitionsAreIndependent(t *testing.T) {
	w := newWatermark()
	slow := w.take(Position{Partition: 0, Offset: 5})
	fast := w.take(Position{Partition: 1, Offset: 7})
	if p, moved := w.finish(fast); !moved || p != (Position{Partition: 1, Offset: 7}) {
		t.Fatalf("partition 1 mark %v %v, want 1:7 whatever partition 0 does", p, moved)
	}
	if w.span(0) != 1 {
		t.Fatalf("partition 0 span %d, want 1", w.span(0))
	}
	w.finish(slow)
}

func TestWatermarkReadFromAnEarlierOffsetStartsThePartitionAfresh(t *testing.T) {
	w := newWatermark()
	old := w.take(Position{Offset: 8})
	// The partition was revoked and assigned back: read again from 6.
	again := w.take(Position{Offset: 6})
	if _, moved := w.finish(old); moved {
		t.Fatal("a record of the revoked assignment moved the mark")
	}
	if p, moved := w.finish(again); !moved || p.Offset != 6 {
		t.Fatalf("mark %v %v, want 6", p, moved)
	}
}

func TestWatermarkCompactsWhatItFinished(t *testing.T) {
	w := newWatermark()
	for off := range uint64(10_000) {
		w.finish(w.take(Position{Offset: off}))
	}
	if n := len(w.parts[0].ents); n > 130 {
		t.Fatalf("%d entries kept for a partition with nothing in flight", n)
	}
	tk := w.take(Position{Offset: 10_000})
	if p, _ := w.finish(tk); p.Offset != 10_000 {
		t.Fatalf("mark %d after compaction, want 10000", p.Offset)
	}
}

func TestWatermarkStaysBelowASkippedRecordUntilItsPinMoves(t *testing.T) {
	w := newWatermark()
	a := w.take(Position{Offset: 0})
	pin := w.skip(Position{Offset: 1}) // a hot key's record, handled later
	w.see(Position{Offset: 2})         // skipped too, under the same pin
	c := w.take(Position{Offset: 3})
	if p, moved := w.finish(a); !moved || p.Offset != 0 {
		t.Fatalf("mark %v %v, want 0", p, moved)
	}
	if p, moved := w.finish(c); moved {
		t.Fatalf("mark moved to %v past the skipped offset 1", p)
	}
	if p, moved := w.movePin(pin, 2); !moved || p.Offset != 1 {
		t.Fatalf("mark %v %v once offset 1 finished, want 1", p, moved)
	}
	if p, moved := w.movePin(pin, 3); !moved || p.Offset != 2 {
		t.Fatalf("mark %v %v once offset 2 finished, want 2", p, moved)
	}
	if p, moved := w.unpin(pin); !moved || p.Offset != 3 {
		t.Fatalf("mark %v %v once the pin was dropped, want 3", p, moved)
	}
}
