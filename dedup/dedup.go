// Package dedup holds the idempotency-key deduplication a runtime.Consumer
// runs for every message that carries a key: the Deduplicator contract and
// the refinements a durable store implements (Forgetter, Completer,
// BatchDeduplicator), the scoped Key the consumer asks about, and the
// in-memory SlidingWindow the consumer uses by default. Package redisdedup
// implements the contract on Redis, for replicas that share it.
package dedup

import (
	"context"
	"strconv"
	"strings"
	"time"
)

const (
	// DefaultWindow is how many idempotency keys the consumer's default
	// SlidingWindow keeps.
	DefaultWindow = 10_000
	// MaxWindow is the most keys a SlidingWindow holds: a table entry of
	// its index keeps the ring index in 32 bits, and the home slot in a
	// 32-bit tag.
	MaxWindow = 1 << 30
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

// Completer is implemented by a Deduplicator that marks keys in two steps,
// as a durable one shared by replicas should: Observe claims a key for the
// message about to be handled, and the consumer calls Complete once the
// message was handled or parked. A claim that is never completed (the
// process was killed in between) is not a duplicate: whoever holds the
// partition next may claim it again, so a crash between marking and
// handling cannot lose the message, and the claim's owner decides how long
// another replica must wait (see package redisdedup).
type Completer interface {
	Complete(ctx context.Context, key string) error
}

// KeyState is what a BatchDeduplicator found for one key of a batch.
type KeyState uint8

// The states of a key answered by BatchDeduplicator.ClaimBatch.
const (
	// KeyClaimed: the key was new (or its claim had lapsed, or belonged to
	// a dead incarnation of the same owner) and is now claimed.
	KeyClaimed KeyState = iota + 1
	// KeyDuplicate: the key was completed before; its record is dropped.
	KeyDuplicate
	// KeyHeld: this deduplicator already held the claim (a message in
	// flight in this process, or handled and not yet completed); the claim
	// was renewed.
	KeyHeld
	// KeyBusy: another replica's claim within its lease; ask again later.
	KeyBusy
)

// BatchDeduplicator is implemented by a two-step Deduplicator that marks
// many keys per call, as a remote store should, where a round trip costs
// far more than the work. The consumer detects it: it claims the keys of a
// polled batch (Serial, or a lane's run of records) in one ClaimBatch just
// before handling them, and completes handled keys in the background, many
// per CompleteBatch, always before the commit round that stores their
// offsets. The meaning of a claim is that of Completer: a claim is never a
// duplicate, and only a completed key is.
//
// Give each consumer its own instance (its own owner): the consumer takes
// a KeyHeld answer for a key only its own loops hold as a claim of its own
// whose answer was lost, and it counts only its own loops, so two
// consumers sharing one instance could both run a record of one key.
type BatchDeduplicator interface {
	Deduplicator
	Completer
	// ClaimBatch claims every key of keys (distinct) in one call and writes
	// what it found for keys[i] to states[i]; len(states) == len(keys). On
	// an error no state is to be trusted; a transient one is asked again.
	ClaimBatch(ctx context.Context, keys []string, states []KeyState) error
	// CompleteBatch is Complete for every key of keys, in one call.
	CompleteBatch(ctx context.Context, keys []string) error
	// ReleaseBatch takes back this deduplicator's claims on keys that no
	// record used (their records were dropped by an earlier gate, or a stop
	// cut the batch short); it leaves other claims and completed keys be.
	ReleaseBatch(ctx context.Context, keys []string) error
	// Lease is how long a claim holds. The consumer renews the claims of a
	// batch whose records have not started once they are older than a
	// tenth of it, so every handler starts with at least nine tenths of
	// the lease ahead of it; zero or less: claims are never renewed.
	Lease() time.Duration
}

// dedupScopeSep separates the sender from its key; U+001F cannot appear in
// an agent id, so the first one ends the sender and two senders' keys never
// collide, an unknown sender's included (its scope is empty, not absent).
const dedupScopeSep = "\x1f"

// Key is the scoped key the consumer observes for a message: the
// sender, U+001F and the idempotency key; the sender is "" when unknown
// (a source of 256 bytes, a plain message without one), so that key is
// U+001F and the key. The sender is the verified principal under a
// Verifier, otherwise the claimed agent, which is a namespace against
// accidental reuse, not a security boundary. A sender holding U+001F
// (never an agent id, nor a principal the consumer accepts) is quoted, so
// the composition stays unambiguous.
func Key(agent, idempotencyKey string) string {
	return dedupScope(agent) + dedupScopeSep + idempotencyKey
}

// dedupScope returns sender as Key writes it.
func dedupScope(sender string) string {
	if strings.Contains(sender, dedupScopeSep) {
		return strconv.Quote(sender)
	}
	return sender
}
