package batch

import (
	"fmt"
	"time"
)

// run is the flusher: it alone publishes, so batches leave in append order.
func (b *Producer) run() {
	defer close(b.stopped)
	var linger <-chan time.Time
	for {
		select {
		case <-b.wake:
			b.publishSealed(false)
		case <-linger:
			linger = nil
			b.publishSealed(b.lingered())
		case reply := <-b.flushes:
			reply <- b.publishSealed(true)
		case <-b.quit:
			b.lastErr = b.publishSealed(true)
			return
		case <-b.ctx.Done():
			err := fmt.Errorf("batch: publish to %s: %w", b.topic, b.ctx.Err())
			b.mu.Lock()
			if !b.closed {
				b.closed, b.refused = true, err
			}
			b.seal()
			rest := b.sealed
			b.sealed = nil
			b.mu.Unlock()
			for _, r := range rest {
				b.resolve(r, err)
			}
			b.lastErr = b.ctx.Err()
			return
		}
		if linger == nil {
			// A running timer is kept: it was armed for an older batch, so it
			// fires no later than the open one's linger and is re-armed then.
			linger = b.lingerTimer()
		}
	}
}

// lingered reports whether the open batch has waited its linger.
func (b *Producer) lingered() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open != nil && b.cfg.Clock.Now().Sub(b.open.first) >= b.cfg.Linger
}

// lingerTimer returns a channel that fires when the open batch has waited
// Linger, or nil when no batch is open, and tells Append whether a timer runs.
func (b *Producer) lingerTimer() <-chan time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = b.open != nil
	if b.open == nil {
		return nil
	}
	left := b.cfg.Linger - b.cfg.Clock.Now().Sub(b.open.first)
	return b.cfg.Clock.After(max(left, 0))
}

// publishSealed publishes the sealed batches, and the open one too when
// all, and returns the first error.
func (b *Producer) publishSealed(all bool) error {
	var first error
	for {
		b.mu.Lock()
		if all {
			b.seal()
		}
		if len(b.sealed) == 0 {
			b.mu.Unlock()
			return first
		}
		r := b.sealed[0]
		b.sealed[0] = nil
		b.sealed = b.sealed[1:]
		b.mu.Unlock()
		if err := b.publish(r); err != nil && first == nil {
			first = err
		}
	}
}

// publish sends one batch in one call and resolves it.
func (b *Producer) publish(r *result) error {
	pos, err := b.pub.Publish(b.ctx, b.topic, r.recs...)
	if err == nil && len(pos) != len(r.recs) {
		err = fmt.Errorf("batch: publish to %s returned %d positions for %d records", b.topic, len(pos), len(r.recs))
	}
	if err != nil {
		err = fmt.Errorf("batch: publish %d records to %s: %w", len(r.recs), b.topic, err)
	}
	r.pos = pos
	b.resolve(r, err)
	return err
}

// resolve settles every Pending of r with err (nil once published) and
// frees its records' room in the queue, waking the appenders waiting for it.
func (b *Producer) resolve(r *result, err error) {
	r.err = err
	n := len(r.recs)
	r.recs = nil // the payloads are the caller's; keep none past the publish
	close(r.done)
	b.mu.Lock()
	b.queued -= n
	if b.room != nil {
		close(b.room)
		b.room = nil
	}
	b.mu.Unlock()
}
