package memory

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Header keys the reference stamps on memory records: the namespace always,
// user and app when the scope names them.
const (
	HeaderNamespace = "agdx.mem.ns"
	HeaderUser      = "agdx.mem.user"
	HeaderApp       = "agdx.mem.app"
)

// maxPartitions caps a topic's partition count, as the reference clamps it.
const maxPartitions = 1024

// Kind says what a remembered item is; it rides the record as its word.
type Kind string

// The reference's memory kinds.
const (
	Fact      Kind = "fact"
	Message   Kind = "message"
	Summary   Kind = "summary"
	Entity    Kind = "entity"
	Feedback  Kind = "feedback"
	Procedure Kind = "procedure"
)

// Scope is where an item is remembered and what recall narrows to; a zero
// field widens recall across that dimension.
type Scope struct {
	// Conversation the item belongs to. A remember with none is filed under
	// a fresh conversation, as the reference does.
	Conversation wire.ID
	// Agent the item is about or from.
	Agent string
	// User and App ride as headers for read views that key on them.
	User string
	App  string
}

// Query narrows a recall.
type Query struct {
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
	Agent        string
	// Score is the accumulated feedback weight; Scored is false when the
	// item has had none.
	Score  float32
	Scored bool
}

// Options configures a Log; the zero value is usable.
type Options struct {
	// Topic holds the memory records. Default runtime.TopicAudit.
	Topic string
	// Namespace isolates memories sharing one topic: every record is
	// stamped with it (agdx.mem.ns), and a Log recalls only its own
	// namespace's items, feedback, tombstones and named state. Default the
	// topic name.
	Namespace string
	// Logger receives memory write failures of Remembering. Default the
	// client's logger.
	Logger *slog.Logger
}

// Log is memory kept on the log. It is safe for concurrent use.
type Log struct {
	client *runtime.Client
	topic  string
	ns     string
	log    *slog.Logger

	mu   sync.Mutex // held while catching up, so folds apply in offset order
	proj projection
}

// New returns the memory of a client's stream.
func New(client *runtime.Client, opts Options) *Log {
	if opts.Topic == "" {
		opts.Topic = runtime.TopicAudit
	}
	if opts.Namespace == "" {
		opts.Namespace = opts.Topic
	}
	if opts.Logger == nil {
		opts.Logger = client.Logger()
	}
	return &Log{client: client, topic: opts.Topic, ns: opts.Namespace, log: opts.Logger, proj: newProjection(opts.Namespace)}
}

// Topic returns the topic the memory lives on.
func (l *Log) Topic() string { return l.topic }

// Remember appends an item of kind under scope and returns its fresh id.
func (l *Log) Remember(ctx context.Context, scope Scope, kind Kind, body []byte) (wire.ID, error) {
	id := l.client.IDs().NewID()
	if kind == "" {
		kind = Fact
	}
	rec := wire.MemoryRecord{Op: wire.MemoryItem, ID: id.String(), Kind: string(kind), Body: body}
	if err := l.publish(ctx, &rec, l.provenance(scope, id.String()), scope); err != nil {
		return wire.ID{}, err
	}
	return id, nil
}

// Forget appends a tombstone: the item drops out of every later recall,
// even one folding a log where the tombstone lands before the item.
func (l *Log) Forget(ctx context.Context, scope Scope, id wire.ID) error {
	rec := wire.MemoryRecord{Op: wire.MemoryForget, ID: id.String()}
	return l.publish(ctx, &rec, l.provenance(scope, l.client.IDs().NewID().String()), scope)
}

// Feedback appends a reweighting of item id: recall ranks items by their
// accumulated weight once any feedback exists. It returns the feedback
// record's id.
func (l *Log) Feedback(ctx context.Context, scope Scope, id wire.ID, weight float32) (wire.ID, error) {
	fid := l.client.IDs().NewID()
	rec := wire.MemoryRecord{Op: wire.MemoryFeedback, ID: id.String(), Weight: weight}
	if err := l.publish(ctx, &rec, l.provenance(scope, fid.String()), scope); err != nil {
		return wire.ID{}, err
	}
	return fid, nil
}

// SetNamed writes named point state: the latest body set under key wins.
func (l *Log) SetNamed(ctx context.Context, key string, body []byte) error {
	id := l.namedKey(key)
	rec := wire.MemoryRecord{Op: wire.MemoryItem, ID: id, Kind: string(Fact), Body: body}
	if err := l.publish(ctx, &rec, namedProvenance(id), Scope{}); err != nil {
		return err
	}
	l.mu.Lock()
	l.proj.named[id] = slices.Clone(body)
	l.mu.Unlock()
	return nil
}

// ForgetNamed deletes named point state.
func (l *Log) ForgetNamed(ctx context.Context, key string) error {
	id := l.namedKey(key)
	rec := wire.MemoryRecord{Op: wire.MemoryForget, ID: id}
	if err := l.publish(ctx, &rec, namedProvenance(id), Scope{}); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.proj.named, id)
	l.mu.Unlock()
	return nil
}

// Named reads named point state, folding the topic first so a fresh Log
// sees what was written before it.
func (l *Log) Named(ctx context.Context, key string) ([]byte, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.catchUp(ctx); err != nil {
		return nil, false, err
	}
	body, ok := l.proj.named[l.namedKey(key)]
	return slices.Clone(body), ok, nil
}

// Recall returns the scope's items that were not forgotten: the most recent
// Limit of them in log order, or, once any feedback exists, the Limit best
// by accumulated weight (stable, so recency breaks ties).
func (l *Log) Recall(ctx context.Context, scope Scope, q Query) ([]Item, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	agent := cmp.Or(q.Agent, scope.Agent)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.catchUp(ctx); err != nil {
		return nil, err
	}
	p := &l.proj
	var items []Item
	for i := range p.items {
		if p.items[i].gone {
			continue
		}
		it := p.items[i].Item
		if !scope.Conversation.IsZero() && it.Conversation != scope.Conversation {
			continue
		}
		if agent != "" && it.Agent != agent {
			continue
		}
		if w, ok := p.feedback[it.ID]; ok {
			it.Score, it.Scored = w, true
		}
		it.Body = slices.Clone(it.Body)
		items = append(items, it)
	}
	if len(p.feedback) > 0 {
		slices.SortStableFunc(items, func(a, b Item) int { return cmp.Compare(b.Score, a.Score) })
		return items[:min(len(items), limit)], nil
	}
	return items[len(items)-min(len(items), limit):], nil
}

func (l *Log) namedKey(key string) string { return l.ns + "/" + key }

// provenance of a memory record: the scope's conversation (a fresh one when
// unset), its agent, and the record's id as idempotency key.
func (l *Log) provenance(scope Scope, idem string) wire.Provenance {
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

func (l *Log) publish(ctx context.Context, rec *wire.MemoryRecord, prov wire.Provenance, scope Scope) error {
	payload, err := rec.Marshal()
	if err != nil {
		return err
	}
	extra := []wire.Header{{Key: HeaderNamespace, Value: wire.StringValue(l.ns)}}
	if scope.User != "" {
		extra = append(extra, wire.Header{Key: HeaderUser, Value: wire.StringValue(scope.User)})
	}
	if scope.App != "" {
		extra = append(extra, wire.Header{Key: HeaderApp, Value: wire.StringValue(scope.App)})
	}
	headers, err := prov.Headers()
	if err != nil {
		return fmt.Errorf("memory: %s: %w", rec.Op, runtime.NewError(runtime.CodeInvalid, "provenance headers", err))
	}
	// A memory record is a plain message with headers of its own, which no
	// send verb adds: it is appended as a raw record.
	out := runtime.Outgoing{Key: prov.PartitionKey(), Headers: append(headers, extra...), Payload: payload}
	write := runtime.Effect{Kind: runtime.EffectMemoryWrite, Operation: rec.Op.String(), Agent: scope.Agent}
	if _, err := l.client.Producer().PublishEffect(ctx, write, l.topic, out); err != nil {
		return fmt.Errorf("memory: %s: %w", rec.Op, err)
	}
	return nil
}

// catchUp folds every record appended since the last catch-up, partition by
// partition up to the tail each had when it was read. l.mu must be held.
func (l *Log) catchUp(ctx context.Context) error {
	t := l.client.Transport()
	n, err := t.Partitions(ctx, l.topic)
	if err != nil {
		return fmt.Errorf("memory: partitions of %s: %w", l.topic, err)
	}
	for p := range min(n, maxPartitions) {
		end, err := t.NextOffset(ctx, l.topic, p)
		if err != nil {
			return fmt.Errorf("memory: tail of %s/%d: %w", l.topic, p, err)
		}
		next, err := logscan.Partition(ctx, t, l.topic, p, l.proj.offsets[p], end, l.proj.absorb)
		l.proj.offsets[p] = next // what was folded stays folded, even on an error
		if err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	return nil
}
