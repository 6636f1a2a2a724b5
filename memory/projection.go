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
	items []entry
	index map[wire.ID]int32 // live item id to its slot in items
	holes int
	// forgotten are the items a forget removed, so the same item appended
	// again stays forgotten; bounded by max, the oldest dropped.
	forgotten boundedSet[tombstone]
	// feedback is the accumulated feedback of live items only: feedback for
	// an id not in the projection applies to nothing and is not kept.
	feedback map[wire.ID]float32
	// applied are the keys of the feedback records counted, so a record
	// appended twice (a retried publish, a replay) counts once; bounded by
	// max.
	applied boundedSet[string]
	named   map[string][]byte
	// namedAt is the record id of the last enveloped write applied to each
	// named key, so a re-appended older record cannot roll the state back.
	namedAt map[string]wire.ID
	// namedOwner is the verified principal that first wrote each named key:
	// under a verifier only it writes or forgets the key again, unless
	// openNamed (Config.Writers lists who may write every key).
	namedOwner map[string]string
	// namedHeld counts the named keys each author holds (namedOwner's
	// values; "" counts every key without a verifier) against maxNamed, 0
	// meaning no bound.
	namedHeld map[string]int
	namedSeen map[string]struct{}
	maxNamed  int
	openNamed bool
	// moderators may forget and reweight items they did not write.
	moderators map[string]bool
	// marks refuse a verified record folded before (see replayMarks).
	marks    replayMarks
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
	// awaiting counts the live items without a vector of this model, which
	// recall embeds again (see Store.reembed).
	awaiting int
	// scratch and touched are keyword recall's accumulators, one per slot
	// (slot+1 marks a touched one), reused across recalls under the lock.
	scratch []scored
	touched []int32
}

// tombstone names a forgotten item by its id, its author and whether the id
// was its content id: a squatter forgotten by its own author does not keep
// the real content-addressed item, or another author's, out.
type tombstone struct {
	id           wire.ID
	author       string
	contentBound bool
}

// entry is a folded item, or the hole a forgotten one left.
type entry struct {
	Item
	length uint32 // terms, for BM25
	hasVec bool
	gone   bool
	// embedding: a recall is embedding the item again outside the lock, so
	// another recall leaves it alone. uncached: the embedder's cache had no
	// vector for it, so recalls stop asking the cache.
	embedding bool
	uncached  bool
	// contentBound: the id is the content id of the item's own fields
	// (ContentID of its scope agent, kind and body), as a Dedup remember
	// writes it.
	contentBound bool
}

func newProjection(model string, dims, maxItems int) projection {
	return projection{
		max:        maxItems,
		model:      model,
		dims:       dims,
		words:      packedWords(dims),
		index:      make(map[wire.ID]int32),
		forgotten:  newBoundedSet[tombstone](maxItems),
		feedback:   make(map[wire.ID]float32),
		applied:    newBoundedSet[string](maxItems),
		named:      make(map[string][]byte),
		namedAt:    make(map[string]wire.ID),
		namedOwner: make(map[string]string),
		namedHeld:  make(map[string]int),
		namedSeen:  make(map[string]struct{}),
		moderators: make(map[string]bool),
		marks:      newReplayMarks(writerWindow),
		offsets:    make(map[uint32]uint64),
		keywords:   newKeywordIndex(),
	}
}

// absorb folds one decoded record and reports whether it was allowed: a
// forget, feedback or named write by a principal the rules below refuse
// returns false, and the caller counts it as refused. An id that is not a
// ULID (a named item's "<namespace>/<key>") folds into the named state.
//
// Under a verifier (records carry their verified author) a forget or
// feedback applies only to an item already in the projection, and only
// when its author wrote the item or is a moderator; without one every
// author is "" and anyone may. A forget or feedback of an id not seen
// applies to nothing and is not kept, so a forget appended before the
// item it names (a content id is predictable) does nothing.
func (p *projection) absorb(r *record) bool {
	if r.vec != nil {
		p.absorbVector(r)
		return true
	}
	rec := r.mem
	id, err := wire.ParseID(rec.ID)
	if err != nil {
		return p.absorbNamed(r)
	}
	switch rec.Op {
	case wire.MemoryForget:
		slot, ok := p.index[id]
		if !ok {
			return true
		}
		if !p.may(r.author, p.items[slot].Author) {
			return false
		}
		e := &p.items[slot]
		p.forgotten.add(tombstone{id: id, author: e.Author, contentBound: e.contentBound})
		p.remove(id)
	case wire.MemoryFeedback:
		slot, ok := p.index[id]
		if !ok {
			return true
		}
		if !p.may(r.author, p.items[slot].Author) {
			return false
		}
		if r.key != "" {
			if added, _, _ := p.applied.add(r.key); !added {
				return true
			}
		}
		p.feedback[id] += rec.Weight
		p.weights[slot] = p.feedback[id]
	case wire.MemoryItem:
		bound := ContentID("", r.scopeAgent, Kind(rec.Kind), rec.Body) == id
		if p.forgotten.has(tombstone{id: id, author: r.author, contentBound: bound}) {
			return true
		}
		if slot, ok := p.index[id]; ok {
			old := &p.items[slot]
			if old.contentBound || !bound {
				// The same id appended twice is one item; another
				// author's item under it is refused.
				return old.Author == r.author
			}
			// The id is a content id and the item under it is not that
			// content: a squatter, displaced by the real item.
			p.remove(id)
		}
		slot := int32(len(p.items))
		e := entry{Item: Item{
			ID: id, Kind: KindOf(rec.Kind), Body: rec.Body, Conversation: r.conv, Agent: r.agent,
			User: r.user, App: r.app, Lifetime: r.lifetime, Author: r.author,
		}, contentBound: bound}
		e.length = p.keywords.add(slot, Tokens(string(rec.Body)))
		p.index[id] = slot
		p.items = append(p.items, e)
		p.vecs = append(p.vecs, make([]uint64, p.words)...)
		p.scales, p.sums = append(p.scales, 0), append(p.sums, 0)
		p.times = append(p.times, max(r.at, 1))
		p.weights = append(p.weights, 0)
		p.awaiting++
		p.evict()
	}
	return true
}

// may reports whether actor's forget or feedback applies to an item author
// wrote.
func (p *projection) may(actor, author string) bool {
	return actor == author || p.moderators[actor]
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
	if !p.items[slot].hasVec {
		p.awaiting--
	}
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
	if !p.items[slot].hasVec {
		p.awaiting--
	}
	delete(p.index, id)
	delete(p.feedback, id)
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

// holdsNamed reports whether author may write key, counting a key new to
// the projection against the author's bound. A key stays known once
// written, even after a forget (its owner, or without a verifier namedSeen,
// remembers it), so rewriting a forgotten key is not counted twice.
func (p *projection) holdsNamed(author, key string, owned bool) bool {
	if p.knowsNamed(author, key, owned) {
		return true
	}
	if p.namedFull(author) {
		return false
	}
	p.namedHeld[author]++
	if author == "" {
		p.namedSeen[key] = struct{}{}
	}
	return true
}

// knowsNamed reports whether key is already counted: owned, or without a
// verifier seen before.
func (p *projection) knowsNamed(author, key string, owned bool) bool {
	if owned {
		return true
	}
	_, seen := p.namedSeen[key]
	return author == "" && seen
}

// namedFull reports whether author holds as many named keys as the bound.
func (p *projection) namedFull(author string) bool {
	return p.maxNamed > 0 && p.namedHeld[author] >= p.maxNamed
}

// absorbNamed folds a named write. Under a verifier, the principal that
// first wrote a key owns it: another's write or forget of it is refused,
// unless the namespace's Writers all may write every key; the replay marks
// have refused any record folded before, so a write applies in fold order
// (ids of two writers minted in one millisecond are not ordered). Read
// without a verifier, an enveloped write carries a record id (a ULID,
// ordered by time): one not newer than the last applied for its key is a
// replay or a stale copy and is dropped. A plain write has no such id and
// applies in fold order.
func (p *projection) absorbNamed(r *record) bool {
	rec := r.mem
	owner, owned := p.namedOwner[rec.ID]
	if r.author != "" && !p.openNamed && owned && owner != r.author {
		return false
	}
	if !p.holdsNamed(r.author, rec.ID, owned) {
		return false
	}
	if r.author == "" && r.id != (wire.ID{}) {
		if last, ok := p.namedAt[rec.ID]; ok && bytes.Compare(r.id[:], last[:]) <= 0 {
			return true
		}
		p.namedAt[rec.ID] = r.id
	}
	if r.author != "" && !owned {
		p.namedOwner[rec.ID] = r.author
	}
	switch rec.Op {
	case wire.MemoryItem:
		p.named[rec.ID] = rec.Body
	case wire.MemoryForget:
		delete(p.named, rec.ID)
	}
	return true
}
