package memory

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/internal/effectgate"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// maxPartitions caps a topic's partition count, as the reference clamps it.
const maxPartitions = 1024

// Scope is where an item is remembered and what recall narrows to; a zero
// field widens recall across that dimension.
type Scope struct {
	// Conversation the item belongs to. A remember with none is filed under
	// a fresh conversation, as the reference does.
	Conversation wire.ID
	// Agent the item is about or from.
	Agent string
	// User and App ride as headers for read views that key on them; recall
	// narrows to them when set.
	User string
	App  string
	// Lifetime of a remembered item, default Session; a Durable item is
	// recalled from every conversation.
	Lifetime Lifetime
}

// Config configures a Store; the zero value is usable.
type Config struct {
	// Topic holds the memory records. Default runtime.TopicAudit.
	Topic string
	// Namespace isolates memories sharing one topic: every record is
	// stamped with it (agdx.mem.ns), and a Store recalls only its own
	// namespace's items, feedback, tombstones and named state, plus the
	// forgets and feedback that carry no namespace (the reference's Rust
	// LogMemory writes them so), which apply to the item they name. Default
	// the topic name. The reference's Python SDK 0.8.2 keeps
	// Laser.memory(name) on agent.memory under "stream:<stream>/<name>".
	Namespace string
	// Embedder turns bodies and queries into vectors for semantic and
	// hybrid recall. Default HashEmbedder, a deterministic baseline.
	Embedder Embedder
	// Model names the embedder's vectors on the log: a stored vector of
	// another model (or dimension) is ignored and the item embedded again.
	// Default HashModel with the default embedder, "custom" otherwise.
	Model string
	// Dims is the embedder's dimension. Default HashDims.
	Dims int
	// ReembedPerRecall bounds how many items without a vector of Model (an
	// enrolled peer's written under another model, or one remembered while
	// the embedder failed) one semantic or hybrid recall sends to the
	// embedder, newest first; the Store's lock is not held while it works.
	// The rest wait for later recalls: meanwhile hybrid recall finds them
	// by keyword and semantic recall leaves them out (see Awaiting). With
	// a CachingEmbedder (such as CachedEmbedder) their cached vectors are
	// read first, up to 64 times the bound per recall, and not counted.
	// Opening a Store embeds nothing. Default DefaultReembedPerRecall;
	// negative means no bound.
	ReembedPerRecall int
	// Key, when set, signs every record this Store writes: each rides as an
	// AGDX event from Agent whose signature covers the record and its scope.
	Key *sign.Key
	// Agent is the signing agent's id, the source of signed records;
	// required with Key.
	Agent string
	// Verifier, when set, makes signatures mandatory on read: only records
	// whose signature verifies and whose signer is their source fold;
	// unsigned ones are refused and counted (Refused). Default the client's
	// Verifier.
	Verifier runtime.Verifier
	// MaxItems bounds the projection: past it, the oldest items leave it
	// (they stay on the log), so a flood of records cannot grow a Store
	// without end; the tombstones and applied feedback keys kept are
	// bounded by it too. Default 1,000,000; negative means no bound.
	MaxItems int
	// Writers, when set under a verifier, are the only principals whose
	// records fold: others' items, tombstones and feedback are refused.
	// Every listed writer may write every named key; without Writers a
	// named key is its first writer's.
	Writers []string
	// MaxNamedKeys bounds the named keys each writer may hold (under a
	// verifier; without one, the named keys in all): past it a write to a
	// new key is refused and counted (Refused), while writes to keys already
	// held still apply, so a flood of new keys by one peer can neither grow
	// a Store without end nor push out another writer's keys. Default
	// DefaultMaxNamedKeys; negative means no bound.
	MaxNamedKeys int
	// Moderators, under a verifier, are principals whose forgets and
	// feedback apply to items they did not write; everyone else's apply
	// only to the items they wrote themselves.
	Moderators []string
	// Logger receives memory write failures of Remembering. Default the
	// client's logger.
	Logger *slog.Logger
}

// Store is memory kept on the log. It is safe for concurrent use.
type Store struct {
	client   *runtime.Client
	topic    string
	ns       string
	log      *slog.Logger
	embedder Embedder
	// cache is the embedder's cache, when it has one a recall can read
	// without computing (see CachingEmbedder).
	cache        CachingEmbedder
	reembedBound int // 0: no bound
	reader       reader
	writer       writer

	// mu is held while catching up and ranking, so folds apply in offset
	// order, and never across an embedder call.
	mu   sync.Mutex
	proj projection
}

// New returns the memory of a client's stream.
func New(client *runtime.Client, opts Config) *Store {
	opts.Topic = cmp.Or(opts.Topic, runtime.TopicAudit)
	opts.Namespace = cmp.Or(opts.Namespace, opts.Topic)
	if opts.Logger == nil {
		opts.Logger = client.Logger()
	}
	if opts.Embedder == nil {
		opts.Embedder, opts.Model = HashEmbedder{}, cmp.Or(opts.Model, HashModel)
	}
	opts.Model, opts.Dims = cmp.Or(opts.Model, "custom"), cmp.Or(opts.Dims, HashDims)
	if opts.Verifier == nil {
		opts.Verifier = client.Verifier()
	}
	var writers map[string]bool
	if len(opts.Writers) > 0 {
		writers = make(map[string]bool, len(opts.Writers))
		for _, w := range opts.Writers {
			writers[w] = true
		}
	}
	l := &Store{
		client: client, topic: opts.Topic, ns: opts.Namespace, log: opts.Logger, embedder: opts.Embedder,
		reader: reader{topic: opts.Topic, ns: opts.Namespace, verifier: opts.Verifier, writers: writers},
		writer: writer{topic: opts.Topic, ns: opts.Namespace, key: opts.Key, agent: opts.Agent, ids: client.IDs(), clock: client.Clock()},
		proj:   newProjection(opts.Model, opts.Dims, bound(opts.MaxItems, DefaultMaxItems)),

		reembedBound: bound(opts.ReembedPerRecall, DefaultReembedPerRecall),
	}
	l.cache, _ = opts.Embedder.(CachingEmbedder)
	l.proj.openNamed = writers != nil
	l.proj.maxNamed = bound(opts.MaxNamedKeys, DefaultMaxNamedKeys)
	for _, m := range opts.Moderators {
		l.proj.moderators[m] = true
	}
	return l
}

// ErrHeld reports a write this Store may not make: a Dedup remember of a
// content id another principal's item holds, or a named write to a key
// another principal owns.
var ErrHeld = errors.New("memory: held by another principal")

// self is the author this Store's own records fold under: its signing
// agent under a verifier, "" without one (every author is "" then).
func (l *Store) self() string {
	if l.reader.verifier == nil || l.writer.key == nil {
		return ""
	}
	return l.writer.agent
}

// DefaultMaxItems is the default bound of a Store's projection.
const DefaultMaxItems = 1_000_000

// DefaultMaxNamedKeys is the default bound of the named keys a writer holds.
const DefaultMaxNamedKeys = 10_000

// bound is a Config bound: 0 takes def, a negative one means none (0).
func bound(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// Topic returns the topic the memory lives on.
func (l *Store) Topic() string { return l.topic }

// RememberOption adjusts one Remember.
type RememberOption func(*rememberSpec)

type rememberSpec struct{ dedup bool }

// Dedup content-addresses the item (ContentID of the scope's agent, the
// kind and the body), so remembering the same fact again stores nothing
// new and returns the same id, whichever process or SDK remembered it.
func Dedup() RememberOption { return func(s *rememberSpec) { s.dedup = true } }

// Remember appends an item of kind under scope, with its vector, and
// returns its id: fresh, or the content id with Dedup. An embedder failure
// is logged and the item remembered without a vector (recall embeds it
// later); it never loses the item.
func (l *Store) Remember(ctx context.Context, scope Scope, kind Kind, body []byte, opts ...RememberOption) (wire.ID, error) {
	var spec rememberSpec
	for _, o := range opts {
		o(&spec)
	}
	kind = cmp.Or(kind, Fact)
	id := l.client.IDs().NewID()
	if spec.dedup {
		id = ContentID("", scope.Agent, kind, body)
		l.mu.Lock()
		var held entry
		slot, known := l.proj.index[id]
		if known {
			held = l.proj.items[slot]
		}
		l.mu.Unlock()
		// An item under the id that is not this content is a squatter:
		// write the real one, which displaces it. The content remembered
		// by another principal is theirs: say so rather than return it.
		if known && held.contentBound {
			if held.Author != l.self() {
				return wire.ID{}, fmt.Errorf("%w: content id %s was remembered by %q", ErrHeld, id, held.Author)
			}
			return id, nil
		}
	}
	rec := wire.MemoryRecord{Op: wire.MemoryItem, ID: id.String(), Kind: string(kind), Body: body}
	payloads := []payload{{rec: &rec}}
	if vecs, err := l.embed(ctx, []string{string(body)}); err != nil {
		l.log.Warn("memory: embedding a remembered item failed; recall embeds it later", "id", id.String(), "error", err)
	} else {
		payloads = append(payloads, payload{vec: &vectorRecord{target: id, model: l.proj.model, vec: vecs[0]}})
	}
	if err := l.publish(ctx, scope, l.provenance(scope, id.String()), payloads...); err != nil {
		return wire.ID{}, err
	}
	return id, nil
}

// Forget appends a tombstone: the item drops out of every later recall,
// even one folding a log where the tombstone lands before the item.
func (l *Store) Forget(ctx context.Context, scope Scope, id wire.ID) error {
	rec := wire.MemoryRecord{Op: wire.MemoryForget, ID: id.String()}
	return l.publish(ctx, scope, l.provenance(scope, l.client.IDs().NewID().String()), payload{rec: &rec})
}

// Feedback appends a reweighting of item id: positive promotes, negative
// demotes, in every strategy (see Strategy). It returns the feedback
// record's id.
func (l *Store) Feedback(ctx context.Context, scope Scope, id wire.ID, weight float32) (wire.ID, error) {
	fid := l.client.IDs().NewID()
	rec := wire.MemoryRecord{Op: wire.MemoryFeedback, ID: id.String(), Weight: weight}
	if err := l.publish(ctx, scope, l.provenance(scope, fid.String()), payload{rec: &rec}); err != nil {
		return wire.ID{}, err
	}
	return fid, nil
}

// SetNamed writes named point state: the latest body set under key wins.
// Under a verifier, a key another principal wrote first is theirs
// (ErrHeld), unless Config.Writers lists who may write every key.
func (l *Store) SetNamed(ctx context.Context, key string, body []byte) error {
	id := l.namedKey(key)
	if err := l.mayName(ctx, id); err != nil {
		return err
	}
	rec := wire.MemoryRecord{Op: wire.MemoryItem, ID: id, Kind: string(Fact), Body: body}
	return l.publish(ctx, Scope{}, namedProvenance(id), payload{rec: &rec})
}

// ForgetNamed deletes named point state, under the same rule as SetNamed.
func (l *Store) ForgetNamed(ctx context.Context, key string) error {
	id := l.namedKey(key)
	if err := l.mayName(ctx, id); err != nil {
		return err
	}
	rec := wire.MemoryRecord{Op: wire.MemoryForget, ID: id}
	return l.publish(ctx, Scope{}, namedProvenance(id), payload{rec: &rec})
}

// mayName refuses a named write the fold would refuse: to a new key past
// the writer's bound (MaxNamedKeys) and, under a verifier, to a key another
// principal owns. Named reads fold the topic, so a write
// is seen once it is on the log, never before.
func (l *Store) mayName(ctx context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.catchUp(ctx); err != nil {
		return err
	}
	self := l.self()
	owner, owned := l.proj.namedOwner[id]
	if !l.proj.knowsNamed(self, id, owned) && l.proj.namedFull(self) {
		return fmt.Errorf("%w: named key %s is new and %q holds %d named keys, the bound (Config.MaxNamedKeys)", ErrHeld, id, self, l.proj.maxNamed)
	}
	if l.reader.verifier != nil && !l.proj.openNamed && owned && owner != self {
		return fmt.Errorf("%w: named key %s was first written by %q", ErrHeld, id, owner)
	}
	return nil
}

// Named reads named point state, folding the topic first so a fresh Store
// sees what was written before it.
func (l *Store) Named(ctx context.Context, key string) ([]byte, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.catchUp(ctx); err != nil {
		return nil, false, err
	}
	body, ok := l.proj.named[l.namedKey(key)]
	return slices.Clone(body), ok, nil
}

// Refused returns how many records the fold has refused so far: unverified
// (ErrUnverified), replayed (ErrReplayed), or changing what their principal
// did not write (ErrNotAuthor).
func (l *Store) Refused() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.proj.refused
}

// Recall returns up to Limit of the scope's items that were not forgotten,
// best first by the query's strategy (see Strategy). It reads only what
// was appended since the previous recall, and a semantic or hybrid recall
// embeds at most Config.ReembedPerRecall items that have no vector yet.
func (l *Store) Recall(ctx context.Context, scope Scope, q Query) ([]Item, error) {
	k := q.Limit
	if k <= 0 {
		k = 50
	}
	strategy := q.Strategy
	if strategy == Auto {
		strategy = Recent
		if q.Text != "" {
			strategy = Hybrid
		}
	}
	var qvec []float32
	if strategy == Semantic || strategy == Hybrid {
		vecs, err := l.embed(ctx, []string{q.Text})
		if err != nil {
			return nil, fmt.Errorf("memory: embedding the query: %w", err)
		}
		qvec = vecs[0]
	}
	m := &matcher{scope: scope, agent: cmp.Or(q.Agent, scope.Agent)}
	if err := l.foldAndEmbed(ctx, m, qvec != nil); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	p := &l.proj
	var ranked []scored
	var signals map[int32][]Signal
	switch strategy {
	case Recent:
		ranked = p.recent(m, k)
	case Keyword:
		ranked = p.keyword(m, q.Text, k)
	case Semantic:
		ranked = p.semantic(m, qvec, k)
	case Hybrid:
		ranked, signals = p.hybrid(m, q.Text, qvec, k)
	default:
		return nil, &runtime.Error{Code: runtime.CodeInvalid, Msg: "memory: unknown recall strategy " + string(strategy)}
	}
	items := make([]Item, len(ranked))
	for i, c := range ranked {
		it := p.items[c.slot].Item
		it.Body = slices.Clone(it.Body)
		it.Feedback = p.feedback[it.ID]
		it.Score, it.Scored = c.score, true
		switch strategy {
		case Recent:
			_, it.Scored = p.feedback[it.ID]
		case Hybrid:
			it.Signals = signals[c.slot]
		default:
			it.Signals = []Signal{{Strategy: strategy, Rank: i, Score: c.score - it.Feedback}}
		}
		items[i] = it
	}
	return items, nil
}

// embed returns the normalized vectors of texts, checking the embedder
// returned one of the Store's dimension per text.
func (l *Store) embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := l.embedder.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	for _, v := range vecs {
		if len(v) != l.proj.dims {
			return nil, fmt.Errorf("embedder returned a vector of %d dimensions, want %d", len(v), l.proj.dims)
		}
		if !finite(v) {
			return nil, errors.New("embedder returned a vector with a NaN or infinite value")
		}
		normalize(v)
	}
	return vecs, nil
}

func (l *Store) namedKey(key string) string { return l.ns + "/" + key }

// provenance of a memory record: the scope's conversation (a fresh one when
// unset), its agent, and the record's id as idempotency key.
func (l *Store) provenance(scope Scope, idem string) wire.Provenance {
	conv := scope.Conversation
	if conv.IsZero() {
		conv = l.client.IDs().NewID()
	}
	return wire.Provenance{Conversation: conv, Agent: scope.Agent, IdempotencyKey: idem}
}

// namedProvenance keys a named item's every write by a conversation derived
// from its id, so they share a partition and fold in order.
func namedProvenance(id string) wire.Provenance {
	return wire.Provenance{Conversation: derive(id), IdempotencyKey: id}
}

// payload is one record to append: a memory record or an item's vector.
type payload struct {
	rec *wire.MemoryRecord
	vec *vectorRecord
}

// publish appends payloads as one batch on the scope's partition, so an
// item's vector lands right after it.
func (l *Store) publish(ctx context.Context, scope Scope, prov wire.Provenance, payloads ...payload) error {
	op := payloads[0].rec.Op
	out := make([]runtime.Outgoing, 0, len(payloads))
	for _, pl := range payloads {
		var b []byte
		if pl.vec != nil {
			b = marshalVector(pl.vec)
		} else {
			var err error
			if b, err = pl.rec.Marshal(); err != nil {
				return err
			}
		}
		o, err := l.writer.outgoing(b, scope, prov, pl.vec != nil)
		if err != nil {
			return fmt.Errorf("memory: %s: %w", op, err)
		}
		out = append(out, o)
	}
	// Memory writes are effects the governor decides on (see runtime.EffectGate).
	write := effect.Effect{Kind: effect.MemoryWrite, Operation: op.String(), Agent: scope.Agent}
	if _, err := l.client.Publish(effectgate.As(ctx, write), l.topic, out...); err != nil {
		return fmt.Errorf("memory: %s: %w", op, err)
	}
	return nil
}

// catchUp folds every record appended since the last catch-up, up to the
// tail each partition had when it was read, merging the partitions in
// broker-time order (ties in partition order): a forget or feedback folds
// after the item it names even when it rode another partition, and a
// writer's records fold in the order it minted their ids, which the replay
// marks rely on. l.mu must be held.
func (l *Store) catchUp(ctx context.Context) error {
	t := l.client.Transport()
	n, err := t.Partitions(ctx, l.topic)
	if err != nil {
		return fmt.Errorf("memory: partitions of %s: %w", l.topic, err)
	}
	n = min(n, maxPartitions)
	// Hold about 1,000 records read ahead across all partitions (one per
	// partition past 1,000 partitions), as one logscan batch would.
	per := max(1, 1000/int(max(n, 1)))
	var heads cursors
	for part := range n {
		end, err := t.NextOffset(ctx, l.topic, part)
		if err != nil {
			return fmt.Errorf("memory: tail of %s/%d: %w", l.topic, part, err)
		}
		c := &cursor{part: part, next: l.proj.offsets[part], end: end}
		if err := c.fill(ctx, t, l.topic, per); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
		if len(c.buf) > 0 {
			heads = append(heads, c)
		}
	}
	heap.Init(&heads)
	for len(heads) > 0 {
		c := heads[0]
		rec := &c.buf[0]
		l.fold(rec)
		c.next = rec.Offset + 1
		l.proj.offsets[c.part] = c.next // what was folded stays folded, even on an error
		c.buf = c.buf[1:]
		if len(c.buf) == 0 {
			if err := c.fill(ctx, t, l.topic, per); err != nil {
				return fmt.Errorf("memory: %w", err)
			}
		}
		if len(c.buf) == 0 {
			heap.Pop(&heads)
		} else {
			heap.Fix(&heads, 0)
		}
	}
	return nil
}

// cursor is one partition's place in a merged catch-up: the records read
// ahead and not folded yet, and the offsets still to read.
type cursor struct {
	part      uint32
	next, end uint64
	buf       []runtime.Incoming
}

// fill reads the partition's next records, up to per, below end.
func (c *cursor) fill(ctx context.Context, t runtime.Transport, topic string, per int) error {
	if c.next >= c.end {
		return nil
	}
	recs, err := t.ReadRange(ctx, topic, c.part, c.next, int(min(c.end-c.next, uint64(per))))
	if err != nil {
		return fmt.Errorf("read %s/%d from %d: %w", topic, c.part, c.next, err)
	}
	for i := range recs {
		if recs[i].Offset >= c.end {
			recs = recs[:i]
			break
		}
	}
	if len(recs) == 0 {
		c.end = c.next // nothing readable below the tail: done for now
	}
	c.buf = recs
	return nil
}

// cursors is a min-heap of partitions by the broker time of their next
// record.
type cursors []*cursor

func (h cursors) Len() int { return len(h) }
func (h cursors) Less(i, j int) bool {
	a, b := &h[i].buf[0], &h[j].buf[0]
	if a.Timestamp != b.Timestamp {
		return a.Timestamp < b.Timestamp
	}
	return h[i].part < h[j].part
}
func (h cursors) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// fold decodes one record and folds it, counting a refused one: one the
// verifier refuses, a verified record folded before (replayMarks), and a
// forget, feedback, item or named write its author may not make.
func (l *Store) fold(in *runtime.Incoming) {
	r, err := l.reader.read(in)
	if r != nil && r.author != "" && !r.id.IsZero() && !l.proj.marks.admit(r.author, r.id) {
		err = fmt.Errorf("%w: record %s of %q was folded before", ErrReplayed, r.id, r.author)
	} else if r != nil && !l.proj.absorb(r) {
		err = fmt.Errorf("%w: %s of %s by %q", ErrNotAuthor, r.mem.Op, r.mem.ID, r.author)
	}
	if err != nil {
		l.proj.refused++
		l.log.Debug("memory: record refused", "topic", l.topic, "position", in.Position.String(), "error", err)
	}
}
