package runtime

import (
	"context"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
)

// Deduplicator decides whether an idempotency key was seen before. The
// default is an in-memory SlidingWindow; a durable store is a drop-in.
type Deduplicator interface {
	// Observe records key and reports whether it is new. An error stops the
	// consumer with the message's offset uncommitted, so nothing is lost.
	Observe(ctx context.Context, key string) (fresh bool, err error)
}

// Forgetter is implemented by a Deduplicator that can take a key back. The
// consumer marks a key before the handler runs; when the message then ends
// neither handled nor parked (its dead-letter publish failed, or a hard stop
// cut the handler off) the consumer forgets the key, so the redelivery that
// follows is not dropped as a duplicate. A durable Deduplicator should
// implement it; one that does not keeps the reference's behaviour, where
// such a redelivery is dropped.
type Forgetter interface {
	Forget(ctx context.Context, key string) error
}

// dedupScopeSep separates the sender from its key; U+001F cannot appear in
// an agent id, so the first one ends the sender and two senders' keys never
// collide, an unknown sender's included (its scope is empty, not absent).
const dedupScopeSep = "\x1f"

// DedupKey is the scoped key the consumer observes for a message: the
// sender, U+001F and the idempotency key; the sender is "" when unknown
// (a source of 256 bytes, a plain message without one), so that key is
// U+001F and the key. The sender is the verified principal under a
// Verifier, otherwise the claimed agent, which is a namespace against
// accidental reuse, not a security boundary. A sender holding U+001F
// (never an agent id, nor a principal the consumer accepts) is quoted, so
// the composition stays unambiguous.
func DedupKey(agent, idempotencyKey string) string {
	return dedupScope(agent) + dedupScopeSep + idempotencyKey
}

// dedupScope returns sender as DedupKey writes it.
func dedupScope(sender string) string {
	if strings.Contains(sender, dedupScopeSep) {
		return strconv.Quote(sender)
	}
	return sender
}

// senderScope is who a message's idempotency key and fence belong to: the
// verified principal under a verifier (a key proves the principal, not the
// claimed source), otherwise the claimed agent.
func (c *Consumer) senderScope(m *Message) string {
	if c.cfg.Verifier != nil {
		return m.VerifiedPrincipal
	}
	return m.Provenance.Agent
}

// SlidingWindow is a FIFO set of the most recent keys: once full, the oldest
// key is forgotten, and seeing a key again does not refresh it. In memory
// only: not shared across replicas and lost on restart (see warm dedup).
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

// hash returns key's hash.
func (s *SlidingWindow) hash(key string) keyHash {
	return keyHash{maphash.String(s.seeds[0], key), maphash.String(s.seeds[1], key)}
}

// scopedHash returns the hash of DedupKey(agent, key) without building it
// on the heap: the scoped key is laid out on the stack when it is short, as
// it almost always is, and written to maphash in parts otherwise (maphash
// hashes a byte sequence the same however it is written).
func (s *SlidingWindow) scopedHash(agent, key string) keyHash {
	agent = dedupScope(agent)
	var buf [128]byte
	if n := len(agent) + len(dedupScopeSep) + len(key); n <= len(buf) {
		b := append(append(append(buf[:0], agent...), dedupScopeSep...), key...)
		return keyHash{maphash.Bytes(s.seeds[0], b), maphash.Bytes(s.seeds[1], b)}
	}
	var h keyHash
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
func (s *SlidingWindow) observeHash(h keyHash) bool {
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
func (s *SlidingWindow) forgetHash(h keyHash) {
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
