package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/lasergo/laser/dedup"
)

// dedupMark is the idempotency key the dedup gate marked for a message, so
// that it can be completed or taken back.
type dedupMark struct {
	// window and hash: the key as a SlidingWindow marked it, by hash.
	window *dedup.SlidingWindow
	hash   dedup.Hash
	// key is the scoped key (dedup.Key) any other Deduplicator was asked
	// about; "" when window is set.
	key string
}

// markKey runs the dedup gate for agent's idempotency key and reports
// whether it is fresh. A SlidingWindow (the default) is asked by hash,
// without building the scoped key: the gate runs for every record, and
// the key would be one allocation each.
//
// Under a BatchDeduplicator the gate takes the claim its loop made for the
// whole batch (cs, from ctx), and asks key by key only what that claim
// did not settle.
func (c *Consumer) markKey(ctx context.Context, cs *claimSet, agent, key string) (dedupMark, bool, error) {
	if w, ok := c.dedup.(*dedup.SlidingWindow); ok {
		h, fresh := w.Mark(agent, key)
		return dedupMark{window: w, hash: h}, fresh, nil
	}
	scoped := dedup.Key(agent, key)
	if cs != nil {
		fresh, err := cs.gate(ctx, scoped)
		return dedupMark{key: scoped}, fresh, err
	}
	fresh, err := c.observeKey(ctx, scoped, nil)
	return dedupMark{key: scoped}, fresh, err
}

// observeKey asks the Deduplicator about key. A transient failure (the
// store is unreachable, or the key is claimed by a message still in flight
// elsewhere) is retried on the poll backoff, 50 ms doubling to 1 s, until
// the store answers or the consumer is stopped hard: the record waits,
// uncommitted, and is never let through as a silent duplicate. Any other
// error stops the consumer with the offset uncommitted. A key that kc
// (when set) holds handled and not yet completed is a duplicate: the store
// reports it claimed, by this very process.
func (c *Consumer) observeKey(ctx context.Context, key string, kc *keyCompleter) (bool, error) {
	for attempt := 1; ; attempt++ {
		if kc != nil && kc.pending(key) {
			return false, nil
		}
		fresh, err := c.dedup.Observe(ctx, key)
		if err == nil || !errors.Is(err, ErrTransient) {
			return fresh, err
		}
		if kc != nil && kc.pending(key) {
			return false, nil
		}
		c.log.Warn("deduplicator unavailable, retrying", "attempt", attempt, "error", err)
		if backoff(ctx, attempt) != nil {
			return false, err
		}
	}
}

// completeKey tells a two-step Deduplicator that the message of key was
// handled or parked. Complete is idempotent, so a failure is retried on the
// poll backoff, as a commit is, ten times at most. Until it succeeds the
// offset must not be committed: a committed record whose key stays a claim
// lets a duplicate through once the claim's lease lapses. So a lasting
// failure is returned as transient: the consumer stops with the record
// uncommitted, and its redelivery is handled again (at least once, never a
// silent duplicate).
//
// Under a BatchDeduplicator the key is queued for the session's completer
// (cs, from ctx) instead, which completes it about a round trip later and
// before the commit round that stores the record's offset.
func (c *Consumer) completeKey(ctx context.Context, cs *claimSet, key string) error {
	if key == "" {
		return nil
	}
	if cs != nil && cs.kc.handled(key) {
		return nil
	}
	k, ok := c.dedup.(dedup.Completer)
	if !ok {
		return nil
	}
	for attempt := 1; ; attempt++ {
		// The record was handled: a hard stop must not cut a call in
		// flight off, only the waiting between calls.
		err := k.Complete(context.WithoutCancel(ctx), key)
		if err == nil {
			return nil
		}
		err = fmt.Errorf("complete idempotency key %q (attempt %d); the record stays uncommitted: %w", key, attempt, errors.Join(ErrTransient, err))
		if attempt >= maxPollErrors {
			return err
		}
		c.log.Warn("cannot complete an idempotency key, retrying", "key", key, "attempt", attempt, "error", err)
		if backoff(ctx, attempt) != nil {
			return err
		}
	}
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
