package memory

import (
	"bytes"
	"math"
	"slices"

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
	// max bounds the live items (0: no bound); oldest is the slot the
	// next eviction starts looking from.
	max    int
	oldest int32
	model  string
	dims   int
	// items are in arrival order; a forgotten one stays as a hole until
	// holes outnumber the live items, so forgetting is not a slice shift.
	items     []entry
	index     map[wire.ID]int32 // live item id to its slot in items
	holes     int
	forgotten map[wire.ID]bool
	feedback  map[wire.ID]float32
	// applied are the keys of the feedback records counted, so a record
	// appended twice (a retried publish, a replay) counts once.
	applied map[string]bool
	named   map[string][]byte
	// namedAt is the record id of the last enveloped write applied to each
	// named key, so a re-appended older record cannot roll the state back.
	namedAt  map[string]wire.ID
	offsets  map[uint32]uint64
	keywords keywordIndex
	// vecs holds words packed words per slot, each slot's unit vector
	// quantized (see pack); scales turns a level back into its float and
	// sums is the sum of the slot's levels.
	vecs   []uint64
	words  int
	scales []float32
	sums   []int32
	// weights is each slot's accumulated feedback and times its broker
	// time (0 once forgotten), so scans read neither a map nor the items.
	weights []float32
	times   []uint64
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
	length uint32 // terms, for BM25
	hasVec bool
	gone   bool
}

func newProjection(model string, dims, maxItems int) projection {
	return projection{
		max:       maxItems,
		model:     model,
		dims:      dims,
		words:     packedWords(dims),
		index:     make(map[wire.ID]int32),
		forgotten: make(map[wire.ID]bool),
		feedback:  make(map[wire.ID]float32),
		applied:   make(map[string]bool),
		named:     make(map[string][]byte),
		namedAt:   make(map[string]wire.ID),
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
		p.absorbNamed(r)
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
		if slot, ok := p.index[id]; ok {
			p.weights[slot] = p.feedback[id]
		}
	case wire.MemoryItem:
		if p.forgotten[id] {
			return
		}
		if _, ok := p.index[id]; ok {
			return // the same id appended twice is one item
		}
		slot := int32(len(p.items))
		e := entry{Item: Item{
			ID: id, Kind: KindOf(rec.Kind), Body: rec.Body, Conversation: r.conv, Agent: r.agent,
			User: r.user, App: r.app, Lifetime: r.lifetime, Author: r.author,
		}}
		e.length = p.keywords.add(slot, Tokens(string(rec.Body)))
		p.index[id] = slot
		p.items = append(p.items, e)
		p.vecs = append(p.vecs, make([]uint64, p.words)...)
		p.scales, p.sums = append(p.scales, 0), append(p.sums, 0)
		p.times = append(p.times, max(r.at, 1))
		p.weights = append(p.weights, p.feedback[id])
		p.evict()
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

// setVector stores v as the slot's vector. A vector with no finite, non-zero
// norm has no direction to rank by: the slot keeps scale 0 (the scan skips
// it) yet counts as embedded, so recall does not embed it again each time.
func (p *projection) setVector(slot int32, v []float32) {
	p.items[slot].hasVec = true
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		clear(p.vector(slot))
		p.scales[slot], p.sums[slot] = 0, 0
		return
	}
	unit := slices.Clone(v)
	normalize(unit)
	p.scales[slot], p.sums[slot] = pack(p.vector(slot), unit, false)
}

func (p *projection) vector(slot int32) []uint64 {
	return p.vecs[int(slot)*p.words : int(slot+1)*p.words]
}

// evict drops the oldest live items while the projection holds more than
// its bound; an evicted item is not tombstoned, it only leaves this view.
func (p *projection) evict() {
	for p.max > 0 && len(p.index) > p.max {
		for p.items[p.oldest].gone {
			p.oldest++
		}
		p.remove(p.items[p.oldest].ID)
	}
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
	p.scales[slot], p.sums[slot], p.weights[slot], p.times[slot] = 0, 0, 0, 0
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
		copy(p.vector(n), p.vector(int32(i)))
		p.scales[n], p.sums[n], p.weights[n], p.times[n] = p.scales[i], p.sums[i], p.weights[i], p.times[i]
		p.index[e.ID] = n
		live = append(live, e)
	}
	clear(p.items[len(live):])
	p.items, p.holes, p.oldest = live, 0, 0
	n := len(live)
	p.vecs, p.scales, p.sums, p.weights, p.times = p.vecs[:n*p.words], p.scales[:n], p.sums[:n], p.weights[:n], p.times[:n]
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

// absorbNamed folds a named write. An enveloped write carries a record id (a
// ULID, ordered by time): one not newer than the last applied for its key
// is a replay or a stale copy and is dropped. A plain write has no such
// id and applies in fold order.
func (p *projection) absorbNamed(r *record) {
	rec := r.mem
	if r.id != (wire.ID{}) {
		if last, ok := p.namedAt[rec.ID]; ok && bytes.Compare(r.id[:], last[:]) <= 0 {
			return
		}
		p.namedAt[rec.ID] = r.id
	}
	switch rec.Op {
	case wire.MemoryItem:
		p.named[rec.ID] = rec.Body
	case wire.MemoryForget:
		delete(p.named, rec.ID)
	}
}
