package memory

import (
	"cmp"
	"container/heap"
	goruntime "runtime"
	"slices"
	"sync"

	"github.com/lasergo/laser/wire"
)

// Strategy says how recall ranks the items in scope.
type Strategy string

// Recall strategies.
const (
	// Auto is Hybrid when the query has text, Recent otherwise. The default.
	Auto Strategy = ""
	// Recent returns the newest items first; once any item has feedback,
	// the best weighted first, newest breaking ties.
	Recent Strategy = "recent"
	// Keyword ranks by BM25 over the items' terms (see Tokens): items
	// matching more of the query's whole terms first, then by score plus
	// feedback weight. Items matching no term are not returned.
	Keyword Strategy = "keyword"
	// Semantic ranks by cosine similarity of the items' vectors to the
	// query's, plus feedback weight.
	Semantic Strategy = "semantic"
	// Hybrid fuses the keyword and semantic rankings, and feedback, by
	// reciprocal rank: each item's Signals say which ranked it and where.
	Hybrid Strategy = "hybrid"
	// FeedbackRank names the feedback-weight ranking in a hybrid item's
	// Signals; it is not a strategy to ask for.
	FeedbackRank Strategy = "feedback"
)

// rrfK is the reciprocal-rank-fusion damping constant: a rank r scores
// 1/(rrfK+r+1), so agreement between signals outranks one signal's top.
const rrfK = 60

// Query narrows and ranks a recall.
type Query struct {
	// Text is what keyword, semantic and hybrid recall rank against.
	Text string
	// Strategy ranks the items; default Auto.
	Strategy Strategy
	// Limit caps the items returned. Default 50.
	Limit int
	// Agent, when set, overrides Scope.Agent as the agent filter.
	Agent string
}

// Item is a recalled memory.
type Item struct {
	ID           wire.ID
	Kind         Kind
	Body         []byte
	Conversation wire.ID
	// Agent the item is about or from, User and App: the scope it was
	// remembered under.
	Agent    string
	User     string
	App      string
	Lifetime Lifetime
	// Author is the principal that signed the item, when a verifier
	// checked it; "" otherwise.
	Author string
	// Feedback is the accumulated feedback weight.
	Feedback float32
	// Score is the rank's score: the feedback weight for Recent (Scored
	// only when the item has feedback), the signal's score plus feedback for
	// Keyword and Semantic, the fused score for Hybrid.
	Score  float32
	Scored bool
	// Signals are the rankings that placed the item, best first within
	// each; empty for Recent.
	Signals []Signal
}

// Signal is one ranking's view of a recalled item.
type Signal struct {
	Strategy Strategy
	// Rank within that ranking, 0 the best.
	Rank int
	// Score is the ranking's own score: BM25, cosine, or feedback weight.
	Score float32
}

// scored is a candidate of a ranking.
type scored struct {
	slot  int32
	exact uint8
	score float32
}

// matcher is a recall's scope filter.
type matcher struct {
	scope Scope
	agent string
}

// all reports whether the matcher matches every item.
func (m *matcher) all() bool { return m.scope == Scope{} && m.agent == "" }

func (m *matcher) match(e *entry) bool {
	s := &m.scope
	if !s.Conversation.IsZero() && e.Conversation != s.Conversation && e.Lifetime != Durable {
		return false
	}
	return (m.agent == "" || e.Agent == m.agent) && (s.User == "" || e.User == s.User) && (s.App == "" || e.App == s.App)
}

// best keeps the k best candidates of a ranking in a heap whose root is the
// worst kept, so a scan over n candidates costs n log k.
type best struct {
	k    int
	less func(a, b scored) bool // a ranks below b
	h    []scored
}

func (b *best) Len() int           { return len(b.h) }
func (b *best) Less(i, j int) bool { return b.less(b.h[i], b.h[j]) }
func (b *best) Swap(i, j int)      { b.h[i], b.h[j] = b.h[j], b.h[i] }
func (b *best) Push(x any)         { b.h = append(b.h, x.(scored)) }
func (b *best) Pop() any           { x := b.h[len(b.h)-1]; b.h = b.h[:len(b.h)-1]; return x }

func (b *best) offer(c scored) {
	if len(b.h) < b.k {
		heap.Push(b, c)
	} else if b.k > 0 && b.less(b.h[0], c) {
		b.h[0] = c
		heap.Fix(b, 0)
	}
}

// sorted returns the kept candidates best first.
func (b *best) sorted() []scored {
	out := slices.Clone(b.h)
	slices.SortFunc(out, func(x, y scored) int {
		switch {
		case b.less(y, x):
			return -1
		case b.less(x, y):
			return 1
		}
		return 0
	})
	return out
}

// newer orders by recency: broker time, then arrival (slots keep it).
func (p *projection) newer(a, b int32) int {
	return cmp.Or(cmp.Compare(p.times[a], p.times[b]), cmp.Compare(a, b))
}

// recent ranks the items in scope newest first, or by feedback weight once
// any exists.
func (p *projection) recent(m *matcher, k int) []scored {
	weighted := len(p.feedback) > 0
	b := &best{k: k, less: func(x, y scored) bool {
		if weighted && x.score != y.score {
			return x.score < y.score
		}
		return p.newer(x.slot, y.slot) < 0
	}}
	all := m.all()
	for i, at := range p.times {
		if at == 0 || !all && !m.match(&p.items[i]) {
			continue
		}
		b.offer(scored{slot: int32(i), score: p.weights[i]})
	}
	return b.sorted()
}

// byScore ranks candidates by exact-term count, then score, then recency.
func (p *projection) byScore(k int) *best {
	return &best{k: k, less: func(x, y scored) bool {
		if x.exact != y.exact {
			return x.exact < y.exact
		}
		if x.score != y.score {
			return x.score < y.score
		}
		return p.newer(x.slot, y.slot) < 0
	}}
}

// keyword ranks the items in scope matching a term of text by BM25 plus
// feedback, those matching more whole query terms first.
func (p *projection) keyword(m *matcher, text string, k int) []scored {
	whole, parts := queryTerms(text)
	x := &p.keywords
	if x.docs == 0 {
		return nil
	}
	avg := float64(x.totalLen) / float64(x.docs)
	if len(p.scratch) < len(p.items) {
		p.scratch = make([]scored, len(p.items))
	}
	acc, touched := p.scratch, p.touched[:0]
	for i, term := range append(whole, parts...) {
		list := x.postings[term]
		if len(list) == 0 {
			continue
		}
		idf := x.idf(x.df[term])
		for _, ps := range list {
			e := &p.items[ps.slot]
			if e.gone {
				continue
			}
			c := &acc[ps.slot]
			if c.slot == 0 {
				if !m.match(e) {
					continue
				}
				*c = scored{slot: ps.slot + 1, score: p.weights[ps.slot]}
				touched = append(touched, ps.slot)
			}
			tf := float64(ps.tf)
			c.score += float32(idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(e.length)/avg)))
			if i < len(whole) && c.exact < 255 {
				c.exact++
			}
		}
	}
	b := p.byScore(k)
	for _, slot := range touched {
		c := acc[slot]
		c.slot = slot
		b.offer(c)
		acc[slot] = scored{}
	}
	p.touched = touched
	return b.sorted()
}

// semanticChunk is the fewest items one goroutine of a semantic scan ranks.
const semanticChunk = 16_384

// semantic ranks the items in scope that have vectors by cosine similarity
// to the unit vector q plus feedback: an exact scan of every vector,
// packed (a score within 2% of the float cosine), split across the
// available processors.
func (p *projection) semantic(m *matcher, q []float32, k int) []scored {
	qv := make([]uint64, p.words)
	qs, qsum := pack(qv, q, true)
	if qs == 0 || !finite(q) {
		// A zero query (text the embedder has no features for) is near
		// nothing; ranking every item by a score of 0 would be noise.
		return nil
	}
	all := m.all()
	scan := func(b *best, from, to int) {
		for i := from; i < to; i++ {
			// A forgotten item, or one without a vector, has scale 0.
			if p.scales[i] == 0 || !all && !m.match(&p.items[i]) {
				continue
			}
			s := qs*p.scales[i]*float32(packedDot(p.vector(int32(i)), qv, p.sums[i], qsum)) + p.weights[i]
			b.offer(scored{slot: int32(i), score: s})
		}
	}
	n := len(p.items)
	workers := min(goruntime.GOMAXPROCS(0), n/semanticChunk)
	if workers <= 1 {
		b := p.byScore(k)
		scan(b, 0, n)
		return b.sorted()
	}
	parts := make([]*best, workers)
	var wg sync.WaitGroup
	for w := range workers {
		parts[w] = p.byScore(k)
		wg.Go(func() { scan(parts[w], n*w/workers, n*(w+1)/workers) })
	}
	wg.Wait()
	b := p.byScore(k)
	for _, part := range parts {
		for _, c := range part.h {
			b.offer(c)
		}
	}
	return b.sorted()
}

// fusion accumulates reciprocal-rank scores and the signals behind them.
type fusion struct {
	order   []int32
	score   map[int32]float32
	signals map[int32][]Signal
}

// add fuses one ranking. A keyword or semantic score includes the item's
// feedback weight (it breaks ties there); weights, when given, is taken
// back out so the signal reports the ranking's own score.
func (f *fusion) add(s Strategy, ranked []scored, sign float32, weights []float32) {
	for r, c := range ranked {
		if _, ok := f.score[c.slot]; !ok {
			f.order = append(f.order, c.slot)
		}
		f.score[c.slot] += sign / float32(rrfK+r+1)
		own := c.score
		if weights != nil {
			own -= weights[c.slot]
		}
		f.signals[c.slot] = append(f.signals[c.slot], Signal{Strategy: s, Rank: r, Score: own})
	}
}

// hybrid fuses the keyword and semantic rankings of the items in scope by
// reciprocal rank; among the candidates, positive feedback ranks as a third
// signal that adds, negative feedback as one that subtracts.
func (p *projection) hybrid(m *matcher, text string, q []float32, k int) ([]scored, map[int32][]Signal) {
	depth := max(2*k, 50)
	f := &fusion{score: map[int32]float32{}, signals: map[int32][]Signal{}}
	f.add(Keyword, p.keyword(m, text, depth), 1, p.weights)
	if q != nil {
		f.add(Semantic, p.semantic(m, q, depth), 1, p.weights)
	}
	var up, down []scored
	for _, slot := range f.order {
		if w := p.weights[slot]; w > 0 {
			up = append(up, scored{slot: slot, score: w})
		} else if w < 0 {
			down = append(down, scored{slot: slot, score: w})
		}
	}
	slices.SortStableFunc(up, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	slices.SortStableFunc(down, func(a, b scored) int { return cmp.Compare(a.score, b.score) })
	f.add(FeedbackRank, up, 1, nil)
	f.add(FeedbackRank, down, -1, nil)
	b := p.byScore(k)
	for _, slot := range f.order {
		b.offer(scored{slot: slot, score: f.score[slot]})
	}
	return b.sorted(), f.signals
}
