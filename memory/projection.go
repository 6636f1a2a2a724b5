package memory

import (
	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// derive is the reference's per-key conversation derivation.
var derive = conversation.Derive

// projection is the folded view recall reads: items in arrival order,
// tombstones, accumulated feedback, named point state, and how far each
// partition has been read.
type projection struct {
	items     []Item
	forgotten map[wire.ID]bool
	feedback  map[wire.ID]float32
	named     map[string][]byte
	offsets   map[uint32]uint64
}

func newProjection() projection {
	return projection{
		forgotten: make(map[wire.ID]bool),
		feedback:  make(map[wire.ID]float32),
		named:     make(map[string][]byte),
		offsets:   make(map[uint32]uint64),
	}
}

// absorb folds one record. A record that is not a memory record, or whose
// provenance headers do not decode, is skipped. An id that is not a ULID
// (a named item's "<namespace>/<key>") folds into the named state.
func (p *projection) absorb(r *runtime.Incoming) {
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
		for i := range p.items {
			if p.items[i].ID == id {
				p.items = append(p.items[:i], p.items[i+1:]...)
				break
			}
		}
	case wire.MemoryFeedback:
		p.feedback[id] += rec.Weight
	case wire.MemoryItem:
		if p.forgotten[id] {
			return
		}
		for i := range p.items {
			if p.items[i].ID == id {
				return // the same id appended twice is one item
			}
		}
		p.items = append(p.items, Item{ID: id, Kind: Kind(rec.Kind), Body: rec.Body, Conversation: prov.Conversation, Agent: prov.Agent})
	}
}

func (p *projection) absorbNamed(rec *wire.MemoryRecord) {
	switch rec.Op {
	case wire.MemoryItem:
		p.named[rec.ID] = rec.Body
	case wire.MemoryForget:
		delete(p.named, rec.ID)
	}
}
