package memory

import (
	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/wire"
)

// derive is the reference's per-key conversation derivation.
var derive = conversation.Derive

// projection is the folded view recall reads for one namespace, kept up to
// date record by record: the items in arrival order with their vectors and
// an inverted index of their terms, tombstones, accumulated feedback, named
// point state, and how far each partition has been read.
type projection struct {
	model string
	dims  int
	// items are in arrival order; a forgotten one stays as a hole until
	// holes outnumber the live items, so forgetting is not a slice shift.
	items     []entry
	index     map[wire.ID]int32 // live item id to its slot in items
	holes     int
	forgotten map[wire.ID]bool
	feedback  map[wire.ID]float32
	// applied are the keys of the feedback records counted, so a record
	// appended twice (a retried publish, a replay) counts once.
	applied  map[string]bool
	named    map[string][]byte
	offsets  map[uint32]uint64
	keywords keywordIndex
	// vecs holds dims floats per slot, zeros where an item has no vector.
	vecs []float32
	seq  uint64
	// refused counts records a verifier refused.
	refused int
	// scratch and touched are keyword recall's accumulators, one per slot
	// (slot+1 marks a touched one), reused across recalls under the lock.
	scratch []scored
	touched []int32
}

// entry is a folded item, or the hole a forgotten one left.
type entry struct {
	Item
	at     uint64 // broker time, the recency order
	seq    uint64 // arrival, breaking ties of at
	length uint32 // terms, for BM25
	hasVec bool
	gone   bool
}

func newProjection(model string, dims int) projection {
	return projection{
		model:     model,
		dims:      dims,
		index:     make(map[wire.ID]int32),
		forgotten: make(map[wire.ID]bool),
		feedback:  make(map[wire.ID]float32),
		applied:   make(map[string]bool),
		named:     make(map[string][]byte),
		offsets:   make(map[uint32]uint64),
		keywords:  newKeywordIndex(),
	}
}

// absorb folds one decoded record. An id that is not a ULID (a named item's
// "<namespace>/<key>") folds into the named state.
func (p *projection) absorb(r *record) {
	if r.vec != nil {
		p.absorbVector(r)
		return
	}
	rec := r.mem
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
		p.remove(id)
	case wire.MemoryFeedback:
		if r.key != "" {
			if p.applied[r.key] {
				return
			}
			p.applied[r.key] = true
		}
		p.feedback[id] += rec.Weight
	case wire.MemoryItem:
		if p.forgotten[id] {
			return
		}
		if _, ok := p.index[id]; ok {
			return // the same id appended twice is one item
		}
		slot := int32(len(p.items))
		p.seq++
		e := entry{Item: Item{
			ID: id, Kind: KindOf(rec.Kind), Body: rec.Body, Conversation: r.conv, Agent: r.agent,
			User: r.user, App: r.app, Lifetime: r.lifetime, Author: r.author,
		}, at: r.at, seq: p.seq}
		e.length = p.keywords.add(slot, Tokens(string(rec.Body)))
		p.index[id] = slot
		p.items = append(p.items, e)
		p.vecs = append(p.vecs, make([]float32, p.dims)...)
	}
}

// absorbVector stores an item's vector when it is of this projection's
// model and dimension, and, for a verified item, signed by the item's author.
func (p *projection) absorbVector(r *record) {
	v := r.vec
	slot, ok := p.index[v.target]
	if !ok || v.model != p.model || len(v.vec) != p.dims || p.items[slot].Author != r.author {
		return
	}
	p.setVector(slot, v.vec)
}

func (p *projection) setVector(slot int32, v []float32) {
	dst := p.vecs[int(slot)*p.dims : int(slot+1)*p.dims]
	copy(dst, v)
	normalize(dst)
	p.items[slot].hasVec = true
}

func (p *projection) vector(slot int32) []float32 {
	return p.vecs[int(slot)*p.dims : int(slot+1)*p.dims]
}

// remove turns a live item into a hole.
func (p *projection) remove(id wire.ID) {
	slot, ok := p.index[id]
	if !ok {
		return
	}
	delete(p.index, id)
	p.keywords.remove(Tokens(string(p.items[slot].Body)))
	p.items[slot] = entry{gone: true}
	clear(p.vector(slot))
	p.holes++
	p.compact()
}

// compact drops the holes once they outnumber the live items, keeping the
// order, and renumbers the slots of the index, the vectors and the
// postings: amortized constant work per forget.
func (p *projection) compact() {
	if p.holes < 64 || p.holes*2 < len(p.items) {
		return
	}
	renumber := make([]int32, len(p.items))
	live := p.items[:0]
	for i, e := range p.items {
		if e.gone {
			renumber[i] = -1
			continue
		}
		n := int32(len(live))
		renumber[i] = n
		copy(p.vecs[int(n)*p.dims:int(n+1)*p.dims], p.vecs[i*p.dims:(i+1)*p.dims])
		p.index[e.ID] = n
		live = append(live, e)
	}
	clear(p.items[len(live):])
	p.items, p.holes = live, 0
	p.vecs = p.vecs[:len(live)*p.dims]
	for term, list := range p.keywords.postings {
		kept := list[:0]
		for _, ps := range list {
			if n := renumber[ps.slot]; n >= 0 {
				kept = append(kept, posting{slot: n, tf: ps.tf})
			}
		}
		if len(kept) == 0 {
			delete(p.keywords.postings, term)
		} else {
			p.keywords.postings[term] = kept
		}
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
