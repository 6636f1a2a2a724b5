package dedup

import (
	"context"
	"hash/maphash"
	"sync"
)

// SlidingWindow is a FIFO set of the most recent keys: once full, the oldest
// key is forgotten, and seeing a key again does not refresh it. In memory
// only: not shared across replicas and lost on restart (see the runtime's warm dedup).
//
// It remembers a 128-bit hash of each key (two maphash seeds of its own),
// not the key: the window holds no pointers for the garbage collector to
// scan, and the consumer observes a message's scoped key without building
// it. Two distinct keys are mistaken for each other with a probability of
// about 2^-128 per pair, far below any hardware error rate.
type SlidingWindow struct {
	seeds [2]maphash.Seed
	mu    sync.Mutex
	w     hashWindow
}

// NewSlidingWindow returns a window that remembers capacity keys: at least
// 1, at most 2^30. Its memory grows with the keys it holds.
func NewSlidingWindow(capacity int) *SlidingWindow {
	return &SlidingWindow{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, w: newHashWindow(capacity)}
}

// Hash is a key's 128-bit hash in a SlidingWindow, as Mark returns it. Its
// first word is already uniformly distributed, so the window indexes with
// it directly rather than hashing it again as a Go map would.
type Hash [2]uint64

// Mark is Observe of Key(sender, idempotencyKey) without building the
// scoped key, for a consumer that marks every record it handles: it reports
// whether the key is new and returns its hash, which Unmark takes back.
func (s *SlidingWindow) Mark(sender, idempotencyKey string) (Hash, bool) {
	h := s.scopedHash(sender, idempotencyKey)
	return h, s.observeHash(h)
}

// Unmark makes the key Mark returned h for unseen again.
func (s *SlidingWindow) Unmark(h Hash) { s.forgetHash(h) }

// hash returns key's hash.
func (s *SlidingWindow) hash(key string) Hash {
	return Hash{maphash.String(s.seeds[0], key), maphash.String(s.seeds[1], key)}
}

// scopedHash returns the hash of Key(agent, key) without building it
// on the heap: the scoped key is laid out on the stack when it is short, as
// it almost always is, and written to maphash in parts otherwise (maphash
// hashes a byte sequence the same however it is written).
func (s *SlidingWindow) scopedHash(agent, key string) Hash {
	agent = dedupScope(agent)
	var buf [128]byte
	if n := len(agent) + len(dedupScopeSep) + len(key); n <= len(buf) {
		b := append(append(append(buf[:0], agent...), dedupScopeSep...), key...)
		return Hash{maphash.Bytes(s.seeds[0], b), maphash.Bytes(s.seeds[1], b)}
	}
	var h Hash
	for i := range s.seeds {
		var mh maphash.Hash
		mh.SetSeed(s.seeds[i])
		mh.WriteString(agent)
		mh.WriteString(dedupScopeSep)
		mh.WriteString(key)
		h[i] = mh.Sum64()
	}
	return h
}

// Observe implements Deduplicator; it never fails.
func (s *SlidingWindow) Observe(_ context.Context, key string) (bool, error) {
	return s.observeHash(s.hash(key)), nil
}

// observeHash records h and reports whether it is new.
func (s *SlidingWindow) observeHash(h Hash) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.insert(h)
}

// Forget implements Forgetter: key counts as unseen again.
func (s *SlidingWindow) Forget(_ context.Context, key string) error {
	s.forgetHash(s.hash(key))
	return nil
}

// forgetHash makes h unseen again.
func (s *SlidingWindow) forgetHash(h Hash) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.remove(h)
}

// Len returns how many keys the window holds.
func (s *SlidingWindow) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.live
}
