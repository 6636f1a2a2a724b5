package memory

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/wire"
)

// DefaultReembedPerRecall is how many items without a vector of the
// Store's model one recall sends to the embedder by default: two embedder
// calls.
const DefaultReembedPerRecall = 512

// embedBatch is how many texts one embedder call carries.
const embedBatch = 256

// cacheLookupsPerEmbed is how many cache lookups a recall makes per text it
// may embed: a lookup reads a vector back, far cheaper than a model call,
// yet a flood of a million items must not turn one recall into a million
// reads either.
const cacheLookupsPerEmbed = 64

// awaitingItem is an item a recall embeds again: its id and, to tell it
// from another item later folded under the same id, its body.
type awaitingItem struct {
	id   wire.ID
	text string
	vec  []float32 // the vector found or computed; nil when none
}

// reembedJob is what one recall embeds again: items to look up in the
// embedder's cache first, and items to embed straight away.
type reembedJob struct {
	lookup, embed []awaitingItem
}

func (j *reembedJob) empty() bool { return len(j.lookup) == 0 && len(j.embed) == 0 }

// Awaiting returns how many items of the projection have no vector of this
// Store's model yet: an enrolled peer's written under another model, or
// items remembered while the embedder failed. Semantic and hybrid recalls
// embed them, at most Config.ReembedPerRecall each.
func (l *Store) Awaiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.proj.awaiting
}

// foldAndEmbed folds what was appended since the last recall and, for a
// recall that ranks by vectors, embeds a bounded number of the items in
// scope that have none, newest first. The Store's lock is released while
// the cache and the embedder work, so other reads and writes proceed.
func (l *Store) foldAndEmbed(ctx context.Context, m *matcher, vectors bool) error {
	l.mu.Lock()
	if err := l.catchUp(ctx); err != nil {
		l.mu.Unlock()
		return err
	}
	var job reembedJob
	if vectors {
		job = l.pickAwaiting(m)
	}
	l.mu.Unlock()
	if job.empty() {
		return nil
	}
	// Settled from a defer: an embedder that panics must not leave its
	// items marked as being embedded, which no later recall would pick.
	defer func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.settle(&job)
	}()
	if err := l.reembed(ctx, &job); err != nil {
		return fmt.Errorf("memory: embedding recalled items: %w", err)
	}
	return nil
}

// pickAwaiting marks and returns the items in scope without a vector that
// this recall embeds, newest first: up to the bound for the embedder and,
// with a caching embedder, up to cacheLookupsPerEmbed times as many whose
// cache was not asked yet. l.mu is held.
func (l *Store) pickAwaiting(m *matcher) reembedJob {
	var job reembedJob
	p := &l.proj
	if p.awaiting == 0 {
		return job
	}
	embeds, lookups := l.reembedBound, 0
	if l.cache != nil {
		lookups = embeds * cacheLookupsPerEmbed
	}
	full := func(list []awaitingItem, n int) bool { return l.reembedBound > 0 && len(list) >= n }
	for i := len(p.items) - 1; i >= 0; i-- {
		e := &p.items[i]
		if e.gone || e.hasVec || e.embedding || !m.match(e) {
			continue
		}
		it := awaitingItem{id: e.ID, text: string(e.Body)}
		switch {
		case l.cache != nil && !e.uncached && !full(job.lookup, lookups):
			job.lookup = append(job.lookup, it)
		case (l.cache == nil || e.uncached) && !full(job.embed, embeds):
			job.embed = append(job.embed, it)
		default:
			continue
		}
		e.embedding = true
		if full(job.embed, embeds) && (l.cache == nil || full(job.lookup, lookups)) {
			break
		}
	}
	return job
}

// reembed finds the job's vectors without the lock: the cached ones first,
// then the embedder's for as many of the rest as the bound leaves room
// for, in batches. It fills each item's vec.
func (l *Store) reembed(ctx context.Context, job *reembedJob) error {
	if len(job.lookup) > 0 {
		texts := make([]string, len(job.lookup))
		for i, it := range job.lookup {
			texts[i] = it.text
		}
		for i, v := range l.cache.Cached(ctx, texts) {
			if v != nil && len(v) == l.proj.dims && finite(v) {
				normalize(v)
				job.lookup[i].vec = v
			}
		}
		// Cache misses take the room the already-uncached items left.
		for i := range job.lookup {
			if job.lookup[i].vec == nil && (l.reembedBound <= 0 || len(job.embed) < l.reembedBound) {
				job.embed = append(job.embed, job.lookup[i])
			}
		}
	}
	for from := 0; from < len(job.embed); from += embedBatch {
		batch := job.embed[from:min(from+embedBatch, len(job.embed))]
		texts := make([]string, len(batch))
		for i, it := range batch {
			texts[i] = it.text
		}
		vecs, err := l.embed(ctx, texts)
		if err != nil {
			return err
		}
		for i := range batch {
			batch[i].vec = vecs[i]
		}
	}
	return nil
}

// settle stores the vectors a job found and unmarks its items; an item a
// forget, an eviction or a displacing item replaced meanwhile is left
// alone. A looked-up item the cache did not hold is marked uncached, so
// later recalls send it to the embedder instead. l.mu is held.
func (l *Store) settle(job *reembedJob) {
	p := &l.proj
	apply := func(it awaitingItem, looked bool) {
		slot, ok := p.index[it.id]
		if !ok {
			return
		}
		e := &p.items[slot]
		if string(e.Body) != it.text {
			return
		}
		e.embedding = false
		switch {
		case it.vec != nil && !e.hasVec:
			p.setVector(slot, it.vec)
		case it.vec == nil && looked:
			e.uncached = true
		}
	}
	for _, it := range job.lookup {
		apply(it, true)
	}
	for _, it := range job.embed {
		apply(it, false)
	}
}
