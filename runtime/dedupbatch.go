package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lasergo/laser/dedup"
)

// claimsKey is the context key of the claimSet a handling loop works with.
type claimsKey struct{}

// withClaims returns ctx carrying cs for the dedup gate.
func withClaims(ctx context.Context, cs *claimSet) context.Context {
	return context.WithValue(ctx, claimsKey{}, cs)
}

// claimsFrom returns the claimSet of ctx, or nil.
func claimsFrom(ctx context.Context) *claimSet {
	cs, _ := ctx.Value(claimsKey{}).(*claimSet)
	return cs
}

// claimSet is one record loop's view of a BatchDeduplicator: the keys of
// the turn it claimed, and the session's completer, which completes
// handled keys in the background. Not safe for concurrent use: each
// scheduler worker's loop has its own.
type claimSet struct {
	c  *Consumer
	bd dedup.BatchDeduplicator
	kc *keyCompleter

	keys   []string // distinct scoped keys claimed for the current batch
	states []dedup.KeyState
	used   []bool // a record of the batch passed the gate with keys[i]
	index  map[string]int
	at     time.Time // when keys were claimed or last renewed (real time: leases run on Redis's clock)
	renew  time.Duration
	// entered: keys were entered in kc's batched count, until reset.
	entered bool
}

// newClaimSet returns the claimSet of a loop of s, or nil when the
// consumer's Deduplicator is not a BatchDeduplicator.
func (s *session) newClaimSet(k *commitBehind) *claimSet {
	if s.c.batch == nil || k.keys == nil {
		return nil
	}
	return &claimSet{c: s.c, bd: s.c.batch, kc: k.keys, index: make(map[string]int), renew: s.c.batch.Lease() / 10}
}

// decodeAll decodes every record of batch into out (reused), taking the
// prefetcher's decoding where it did it, so the keys can be claimed before
// the first record is handled.
func decodeAll(c *Consumer, slab *messageSlab, batch []*Incoming, pre []decodedRecord, out []decodedRecord) []decodedRecord {
	if pre != nil {
		return pre
	}
	out = out[:0]
	for _, rec := range batch {
		out = append(out, c.decode(slab, rec))
	}
	return out
}

// claim claims, in one call, the idempotency keys of the decoded records
// of a batch that may reach the dedup gate, as the gates' ahead rules say
// (gateSteps): a record a gate run ahead stops (the target filter) is left
// out; one a later gate stops leaves its claim unused, and release takes
// it back; under a gate that decides the keys' scope (the signature gate:
// the verified principal) nothing is claimed ahead and the dedup gate
// claims key by key. A transient failure is asked again on the poll
// backoff until the store answers or ctx ends.
func (cs *claimSet) claim(ctx context.Context, recs []decodedRecord) error {
	cs.reset()
	c := cs.c
	if !c.claimsAhead() {
		return nil
	}
	for _, r := range recs {
		m := r.m
		if m == nil || m.Provenance.IdempotencyKey == "" || !c.passesAhead(m) {
			continue
		}
		key := dedup.Key(m.Provenance.Agent, m.Provenance.IdempotencyKey)
		if _, ok := cs.index[key]; ok {
			continue // a duplicate within the batch: one claim serves both
		}
		cs.index[key] = len(cs.keys)
		cs.keys = append(cs.keys, key)
	}
	if len(cs.keys) == 0 {
		return nil
	}
	cs.states = append(cs.states[:0], make([]dedup.KeyState, len(cs.keys))...)
	cs.used = append(cs.used[:0], make([]bool, len(cs.keys))...)
	cs.kc.enter(cs.keys)
	cs.entered = true
	if err := cs.ask(ctx, cs.keys, cs.states); err != nil {
		cs.reset()
		return fmt.Errorf("dedup: %w", err)
	}
	for i, st := range cs.states {
		if st == dedup.KeyHeld && cs.kc.alone(cs.keys[i]) {
			// No other loop of this process has the key in its batch, and
			// none handled it: the claim is this loop's own, from a
			// ClaimBatch whose answer was lost (a retried call, or a
			// pipeline go-redis sent again), or one a release failed to
			// take back. The record runs at once, and release takes the
			// claim back when unused.
			cs.states[i] = dedup.KeyClaimed
		}
	}
	cs.at = time.Now()
	return nil
}

// ask runs ClaimBatch under the transient-retry policy of observeKey.
func (cs *claimSet) ask(ctx context.Context, keys []string, states []dedup.KeyState) error {
	for attempt := 1; ; attempt++ {
		err := cs.bd.ClaimBatch(ctx, keys, states)
		if err == nil || !errors.Is(err, ErrTransient) {
			return err
		}
		cs.c.log.Warn("deduplicator unavailable, retrying", "attempt", attempt, "keys", len(keys), "error", err)
		if backoff(ctx, attempt) != nil {
			return err
		}
	}
}

// renewClaims claims again the keys this batch claimed and no record used
// yet, once they are older than a tenth of the lease (slow handlers): a
// record's handler then starts with its claim fresh, as when it was
// claimed alone.
func (cs *claimSet) renewClaims(ctx context.Context) error {
	var keys []string
	var at []int
	for i, st := range cs.states {
		if st == dedup.KeyClaimed && !cs.used[i] {
			keys = append(keys, cs.keys[i])
			at = append(at, i)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	states := make([]dedup.KeyState, len(keys))
	if err := cs.ask(ctx, keys, states); err != nil {
		return err
	}
	for j, i := range at {
		st := states[j]
		if st == dedup.KeyHeld {
			st = dedup.KeyClaimed // still ours
		}
		cs.states[i] = st
	}
	cs.at = time.Now()
	return nil
}

// gate is the dedup gate under a BatchDeduplicator: it reports whether key
// (scoped) is fresh for the record at hand. A key claimed for the batch is
// fresh for its first record and a duplicate for the batch's later ones
// (the first was handled or parked before them, or the consumer stopped);
// a key handled here and not yet completed is a duplicate, whatever the
// store says (its claim may have lapsed while its completion was retried);
// anything else (a key claimed elsewhere, or not claimed ahead) is asked
// key by key.
func (cs *claimSet) gate(ctx context.Context, key string) (bool, error) {
	i, ok := cs.index[key]
	if ok && cs.used[i] {
		return false, nil
	}
	if cs.kc.pending(key) {
		if ok {
			cs.used[i] = true // its claim is not taken back: the completer completes it
		}
		return false, nil
	}
	if ok {
		if cs.states[i] == dedup.KeyClaimed && cs.renew > 0 && time.Since(cs.at) >= cs.renew {
			if err := cs.renewClaims(ctx); err != nil {
				return false, err
			}
		}
		switch cs.states[i] {
		case dedup.KeyClaimed:
			cs.used[i] = true
			return true, nil
		case dedup.KeyDuplicate:
			cs.used[i] = true
			return false, nil
		}
	}
	fresh, err := cs.c.observeKey(ctx, key, cs.kc)
	if err == nil && ok {
		cs.used[i] = true
	}
	return fresh, err
}

// release takes back the batch's claims that no record used, and forgets
// the batch. A failure is only logged: the claims lapse after their lease.
func (cs *claimSet) release(ctx context.Context) {
	if cs == nil {
		return
	}
	var unused []string
	for i, st := range cs.states {
		if st == dedup.KeyClaimed && !cs.used[i] {
			unused = append(unused, cs.keys[i])
		}
	}
	// The keys leave the batched count only after the release, so no
	// other loop takes an unused claim for its own before it is gone.
	if len(unused) > 0 {
		if err := cs.bd.ReleaseBatch(context.WithoutCancel(ctx), unused); err != nil {
			cs.c.log.Warn("cannot release unused idempotency claims; they lapse after their lease", "keys", len(unused), "error", err)
		}
	}
	cs.reset()
}

func (cs *claimSet) reset() {
	if cs.entered {
		cs.kc.leave(cs.keys)
		cs.entered = false
	}
	clear(cs.index)
	cs.keys, cs.states, cs.used = cs.keys[:0], cs.states[:0], cs.used[:0]
}

// keyCompleter completes the keys of handled and parked records in the
// background, as a group commit: while one CompleteBatch is in flight the
// next keys gather, and go in the next call as soon as it returns. So a
// handled key is completed about one round trip after its handler
// returned, a crash leaves at most the keys of that round trip claimed
// (their records are handled again, as a cut-off handler's is), and the
// handling loop never waits for Redis to complete. The commit round waits
// for the keys handled before it (wait), so no offset is stored while its
// key is still a claim.
type keyCompleter struct {
	c *Consumer
	s *session

	mu         sync.Mutex
	queue      []string
	spare      []string
	completing map[string]int // handled here, not yet completed
	batched    map[string]int // in the current batch of so many loops (claimSet.claim to reset)
	added      uint64         // keys queued so far
	done       uint64         // keys completed so far
	err        error          // the first lasting failure
	closed     bool
	progress   chan struct{} // closed when done moves or err is set

	wake     chan struct{} // capacity 1
	quit     chan struct{}
	loopDone chan struct{}
	once     sync.Once
}

func (s *session) startKeyCompleter() *keyCompleter {
	kc := &keyCompleter{
		c: s.c, s: s, completing: make(map[string]int), batched: make(map[string]int),
		progress: make(chan struct{}), wake: make(chan struct{}, 1),
		quit: make(chan struct{}), loopDone: make(chan struct{}),
	}
	go kc.run()
	return kc
}

// handled queues key for completion; false once the completer was closed
// (a handler that finished after the session ended), when the caller
// completes the key itself.
func (kc *keyCompleter) handled(key string) bool {
	kc.mu.Lock()
	if kc.closed {
		kc.mu.Unlock()
		return false
	}
	kc.queue = append(kc.queue, key)
	kc.completing[key]++
	kc.added++
	kc.mu.Unlock()
	select {
	case kc.wake <- struct{}{}:
	default:
	}
	return true
}

// pending reports whether key was handled here and is not yet completed:
// a record carrying it is a duplicate.
func (kc *keyCompleter) pending(key string) bool {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	return kc.completing[key] > 0
}

// enter counts keys into the batch of one more loop.
func (kc *keyCompleter) enter(keys []string) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	for _, k := range keys {
		kc.batched[k]++
	}
}

// leave counts keys out of a loop's batch.
func (kc *keyCompleter) leave(keys []string) {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	for _, k := range keys {
		if n := kc.batched[k] - 1; n > 0 {
			kc.batched[k] = n
		} else {
			delete(kc.batched, k)
		}
	}
}

// alone reports whether key is in one loop's batch only (the caller's)
// and not handled here awaiting completion: a claim this process holds on
// it can then be no other loop's, since a loop that claims ahead holds
// claims only on keys of its batch (the gate asks key by key only for
// those, and a loop with a Verifier claims nothing ahead, so it never asks
// this). It counts this consumer's loops only: a deduplicator instance
// shared with another consumer would answer KeyHeld for that one's claims
// too, which is why BatchDeduplicator asks for an instance per consumer.
func (kc *keyCompleter) alone(key string) bool {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	return kc.batched[key] == 1 && kc.completing[key] == 0
}

// target is how many keys were queued so far: a commit round waits for
// that many to be completed.
func (kc *keyCompleter) target() uint64 {
	kc.mu.Lock()
	defer kc.mu.Unlock()
	return kc.added
}

// wait returns once the first n keys queued are completed, or the
// completer failed, or ctx ended.
func (kc *keyCompleter) wait(ctx context.Context, n uint64) error {
	for {
		kc.mu.Lock()
		done, err, progress := kc.done, kc.err, kc.progress
		kc.mu.Unlock()
		if done >= n {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return fmt.Errorf("dedup: wait for idempotency keys to be completed: %w", ctx.Err())
		}
	}
}

func (kc *keyCompleter) run() {
	defer close(kc.loopDone)
	for {
		select {
		case <-kc.wake:
		case <-kc.quit:
			return
		}
		if !kc.completeQueued() {
			return
		}
	}
}

// completeQueued completes what is queued; false after a lasting failure.
func (kc *keyCompleter) completeQueued() bool {
	kc.mu.Lock()
	batch := kc.queue
	kc.queue = kc.spare[:0]
	kc.mu.Unlock()
	if len(batch) == 0 {
		kc.spare = batch
		return true
	}
	ctx, cancel := kc.s.commitCtx()
	err := kc.c.completeKeys(ctx, batch)
	cancel()
	kc.mu.Lock()
	defer kc.mu.Unlock()
	defer func() {
		close(kc.progress)
		kc.progress = make(chan struct{})
	}()
	if err != nil {
		// The keys stay pending (their records were handled: a duplicate
		// is still dropped); no offset past them is committed.
		kc.err = err
		return false
	}
	for _, key := range batch {
		if n := kc.completing[key] - 1; n > 0 {
			kc.completing[key] = n
		} else {
			delete(kc.completing, key)
		}
	}
	kc.done += uint64(len(batch))
	clear(batch)
	kc.spare = batch
	return true
}

// close stops the background loop and completes what is left on the
// caller's goroutine; it returns the first lasting failure. Keys handled
// after it are completed by their own caller.
func (kc *keyCompleter) close() error {
	kc.once.Do(func() {
		close(kc.quit)
		<-kc.loopDone
		kc.mu.Lock()
		kc.closed = true // from now on nothing is queued
		failed := kc.err != nil
		kc.mu.Unlock()
		if !failed {
			kc.completeQueued()
		}
	})
	kc.mu.Lock()
	defer kc.mu.Unlock()
	return kc.err
}

// completeKeys is completeKey for a batch of keys, with the same retries.
func (c *Consumer) completeKeys(ctx context.Context, keys []string) error {
	for attempt := 1; ; attempt++ {
		err := c.batch.CompleteBatch(context.WithoutCancel(ctx), keys)
		if err == nil {
			return nil
		}
		err = fmt.Errorf("complete %d idempotency keys (attempt %d); their records stay uncommitted: %w", len(keys), attempt, errors.Join(ErrTransient, err))
		if attempt >= maxPollErrors {
			return err
		}
		c.log.Warn("cannot complete idempotency keys, retrying", "keys", len(keys), "attempt", attempt, "error", err)
		if backoff(ctx, attempt) != nil {
			return err
		}
	}
}
