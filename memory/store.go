package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/lasergo/laser/internal/logscan"
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

// Options configures a Store; the zero value is usable.
type Options struct {
	// Topic holds the memory records. Default runtime.TopicAudit.
	Topic string
	// Namespace isolates memories sharing one topic: every record is
	// stamped with it (agdx.mem.ns), and a Store recalls only its own
	// namespace's items, feedback, tombstones and named state. Default the
	// topic name.
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
	// without end. Default 1,000,000; negative means no bound.
	MaxItems int
	// Writers, when set under a verifier, are the only principals whose
	// records fold: others' items, tombstones and feedback are refused.
	Writers []string
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
	reader   reader
	writer   writer

	mu   sync.Mutex // held while catching up and ranking, so folds apply in offset order
	proj projection
}

// New returns the memory of a client's stream.
func New(client *runtime.Client, opts Options) *Store {
	opts.Topic = cmp.Or(opts.Topic, runtime.TopicAudit)
	opts.Namespace = cmp.Or(opts.Namespace, opts.Topic)
	if opts.Logger == nil {
		opts.Logger = client.Logger()
	}
	if opts.Embedder == nil {
		opts.Embedder, opts.Model, opts.Dims = HashEmbedder{}, cmp.Or(opts.Model, HashModel), cmp.Or(opts.Dims, HashDims)
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
	return &Store{
		client: client, topic: opts.Topic, ns: opts.Namespace, log: opts.Logger, embedder: opts.Embedder,
		reader: reader{topic: opts.Topic, ns: opts.Namespace, verifier: opts.Verifier, writers: writers},
		writer: writer{ns: opts.Namespace, key: opts.Key, agent: opts.Agent, ids: client.IDs()},
		proj:   newProjection(opts.Model, opts.Dims, maxItems(opts.MaxItems)),
	}
}

// DefaultMaxItems is the default bound of a Store's projection.
const DefaultMaxItems = 1_000_000

func maxItems(n int) int {
	switch {
	case n == 0:
		return DefaultMaxItems
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
		_, known := l.proj.index[id]
		l.mu.Unlock()
		if known {
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
func (l *Store) SetNamed(ctx context.Context, key string, body []byte) error {
	id := l.namedKey(key)
	rec := wire.MemoryRecord{Op: wire.MemoryItem, ID: id, Kind: string(Fact), Body: body}
	if err := l.publish(ctx, Scope{}, namedProvenance(id), payload{rec: &rec}); err != nil {
		return err
	}
	l.mu.Lock()
	l.proj.named[id] = slices.Clone(body)
	l.mu.Unlock()
	return nil
}

// ForgetNamed deletes named point state.
func (l *Store) ForgetNamed(ctx context.Context, key string) error {
	id := l.namedKey(key)
	rec := wire.MemoryRecord{Op: wire.MemoryForget, ID: id}
	if err := l.publish(ctx, Scope{}, namedProvenance(id), payload{rec: &rec}); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.proj.named, id)
	l.mu.Unlock()
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

// Refused returns how many records the verifier has refused so far.
func (l *Store) Refused() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.proj.refused
}

// Recall returns up to Limit of the scope's items that were not forgotten,
// best first by the query's strategy (see Strategy). It reads only what
// was appended since the previous recall.
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
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.catchUp(ctx); err != nil {
		return nil, err
	}
	p := &l.proj
	if qvec != nil {
		if err := l.embedMissing(ctx, m); err != nil {
			return nil, err
		}
	}
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
		return nil, runtime.NewError(runtime.CodeInvalid, "memory: unknown recall strategy "+string(strategy), nil)
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

// embedMissing embeds the items in scope that have no vector (written by
// an SDK that stores none, or under another model), in batches. l.mu is held.
func (l *Store) embedMissing(ctx context.Context, m *matcher) error {
	const batch = 256
	p := &l.proj
	var slots []int32
	var texts []string
	flush := func() error {
		if len(slots) == 0 {
			return nil
		}
		vecs, err := l.embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("memory: embedding recalled items: %w", err)
		}
		for i, s := range slots {
			p.setVector(s, vecs[i])
		}
		slots, texts = slots[:0], texts[:0]
		return nil
	}
	for i := range p.items {
		e := &p.items[i]
		if e.gone || e.hasVec || !m.match(e) {
			continue
		}
		slots, texts = append(slots, int32(i)), append(texts, string(e.Body))
		if len(slots) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
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
	write := runtime.Effect{Kind: runtime.EffectMemoryWrite, Operation: op.String(), Agent: scope.Agent}
	if _, err := l.client.Producer().PublishEffect(ctx, write, l.topic, out...); err != nil {
		return fmt.Errorf("memory: %s: %w", op, err)
	}
	return nil
}

// catchUp folds every record appended since the last catch-up, partition by
// partition up to the tail each had when it was read. l.mu must be held.
func (l *Store) catchUp(ctx context.Context) error {
	t := l.client.Transport()
	n, err := t.Partitions(ctx, l.topic)
	if err != nil {
		return fmt.Errorf("memory: partitions of %s: %w", l.topic, err)
	}
	for part := range min(n, maxPartitions) {
		end, err := t.NextOffset(ctx, l.topic, part)
		if err != nil {
			return fmt.Errorf("memory: tail of %s/%d: %w", l.topic, part, err)
		}
		next, err := logscan.Partition(ctx, t, l.topic, part, l.proj.offsets[part], end, l.fold)
		l.proj.offsets[part] = next // what was folded stays folded, even on an error
		if err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	return nil
}

// fold decodes one record and folds it, counting a refused one.
func (l *Store) fold(in *runtime.Incoming) {
	r, err := l.reader.read(in)
	switch {
	case errors.Is(err, errUnverified):
		l.proj.refused++
		l.log.Debug("memory: record refused", "topic", l.topic, "position", in.Position.String(), "error", err)
	case r != nil:
		l.proj.absorb(r)
	}
}
