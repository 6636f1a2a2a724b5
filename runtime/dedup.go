package runtime

import (
	"context"
	"sync"
)

// Deduplicator decides whether an idempotency key was seen before. The
// default is an in-memory SlidingWindow; a durable store is a drop-in.
type Deduplicator interface {
	// Observe records key and reports whether it is new. An error stops the
	// consumer with the message's offset uncommitted, so nothing is lost.
	Observe(ctx context.Context, key string) (fresh bool, err error)
}

// DefaultDedupWindow is how many idempotency keys the default window keeps.
const DefaultDedupWindow = 10_000

// dedupScopeSep separates the sending agent from its key; U+001F cannot
// appear in an agent id, so two agents' keys never collide.
const dedupScopeSep = "\x1f"

// DedupKey is the scoped key the consumer observes for a message: the
// sending agent, U+001F and the idempotency key, or the bare key when the
// sender is unknown. It is a namespace against accidental reuse, not a
// security boundary.
func DedupKey(agent, idempotencyKey string) string {
	if agent == "" {
		return idempotencyKey
	}
	return agent + dedupScopeSep + idempotencyKey
}

// SlidingWindow is a FIFO set of the most recent keys: once full, the oldest
// key is forgotten, and seeing a key again does not refresh it. In memory
// only: not shared across replicas and lost on restart (see warm dedup).
type SlidingWindow struct {
	mu sync.Mutex
	w  fifoSet
}

// NewSlidingWindow returns a window that remembers capacity keys (at least 1).
func NewSlidingWindow(capacity int) *SlidingWindow {
	return &SlidingWindow{w: newFIFOSet(capacity)}
}

// Observe implements Deduplicator; it never fails.
func (s *SlidingWindow) Observe(_ context.Context, key string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.insert(key), nil
}

// Len returns how many keys the window holds.
func (s *SlidingWindow) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.w.seen)
}

// fifoSet is a bounded set that evicts in insertion order; it backs the dedup
// window and the signed-record replay window.
type fifoSet struct {
	seen  map[string]struct{}
	ring  []string
	head  int // index of the oldest key once the ring is full
	limit int
}

func newFIFOSet(capacity int) fifoSet {
	if capacity < 1 {
		capacity = 1
	}
	return fifoSet{seen: make(map[string]struct{}), limit: capacity}
}

// insert adds key and reports whether it was absent.
func (f *fifoSet) insert(key string) bool {
	if _, dup := f.seen[key]; dup {
		return false
	}
	if len(f.ring) < f.limit {
		f.ring = append(f.ring, key)
	} else {
		delete(f.seen, f.ring[f.head])
		f.ring[f.head] = key
		f.head = (f.head + 1) % f.limit
	}
	f.seen[key] = struct{}{}
	return true
}
