package memory

import (
	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// derive is the reference's per-key conversation derivation.
var derive = conversation.Derive

// projection is the folded view recall reads for one namespace: items in
// arrival order, tombstones, accumulated feedback, named point state, and
// how far each partition has been read.
type projection struct {
	ns string
	// items are in arrival order; a forgotten one stays as a hole until
	// holes outnumber the live items, so forgetting is not a slice shift.
	items     []entry
	index     map[wire.ID]int // live item id to its place in items
	holes     int
	forgotten map[wire.ID]bool
	feedback  map[wire.ID]float32
	named     map[string][]byte
	offsets   map[uint32]uint64
}

// entry is a folded item, or the hole a forgotten one left.
type entry struct {
	Item
	gone bool
}

func newProjection(ns string) projection {
	return projection{
		ns:        ns,
		index:     make(map[wire.ID]int),
		forgotten: make(map[wire.ID]bool),
		feedback:  make(map[wire.ID]float32),
		named:     make(map[string][]byte),
		offsets:   make(map[uint32]uint64),
	}
}

// absorb folds one record. A record of another namespace (its agdx.mem.ns
// header names another, or none), one that is not a memory record, or whose
// provenance headers do not decode, is skipped. An id that is not a ULID (a
// named item's "<namespace>/<key>") folds into the named state.
func (p *projection) absorb(r *runtime.Incoming) {
	if ns, ok := r.Headers.Get(HeaderNamespace); !ok {
		return
	} else if s, err := ns.AsString(); err != nil || s != p.ns {
		return
	}
	rec, err := wire.DecodeMemoryRecord(r.Payload)
	if err != nil {
		return
	}
	prov, err := wire.DecodeProvenance(r.Headers)
	if err != nil {
		return
	}
	id, err := wire.ParseID(rec.ID)
	if err != nil {
		p.absorbNamed(rec)
		return
	}
	switch rec.Op {
	case wire.MemoryForget:
		// Keep the tombstone, so an item folded later (from another
		// partition) is still suppressed.
		p.forgotten[id] = true
		if i, ok := p.index[id]; ok {
			delete(p.index, id)
			p.items[i] = entry{gone: true}
			p.holes++
			p.compact()
		}
	case wire.MemoryFeedback:
		p.feedback[id] += rec.Weight
	case wire.MemoryItem:
		if p.forgotten[id] {
			return
		}
		if _, ok := p.index[id]; ok {
			return // the same id appended twice is one item
		}
		p.index[id] = len(p.items)
		p.items = append(p.items, entry{Item: Item{ID: id, Kind: Kind(rec.Kind), Body: rec.Body, Conversation: prov.Conversation, Agent: prov.Agent}})
	}
}

// compact drops the holes once they outnumber the live items, keeping the
// order, and reindexes: amortized constant work per forget.
func (p *projection) compact() {
	if p.holes < 64 || p.holes*2 < len(p.items) {
		return
	}
	live := p.items[:0]
	for _, e := range p.items {
		if !e.gone {
			p.index[e.ID] = len(live)
			live = append(live, e)
		}
	}
	clear(p.items[len(live):])
	p.items, p.holes = live, 0
}

func (p *projection) absorbNamed(rec *wire.MemoryRecord) {
	switch rec.Op {
	case wire.MemoryItem:
		p.named[rec.ID] = rec.Body
	case wire.MemoryForget:
		delete(p.named, rec.ID)
	}
}
