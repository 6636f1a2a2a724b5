package lasertest

import (
	"context"
	"sync"
	"time"
)

// ManualClock is a Clock that moves only when told to, for deterministic
// tests of deadlines, fences, retries and shutdown grace.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []manualWaiter
	changed chan struct{} // closed and replaced whenever a timer is added
}

type manualWaiter struct {
	at time.Time
	ch chan time.Time
}

// NewManualClock returns a clock stopped at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After returns a channel that fires when Advance moves the clock past d.
func (c *ManualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	at := c.now.Add(d)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, manualWaiter{at: at, ch: ch})
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
	return ch
}

// BlockUntil waits until at least n timers are pending, so a test advances
// the clock only once the code under test is asleep on it.
func (c *ManualClock) BlockUntil(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if len(c.waiters) >= n {
			c.mu.Unlock()
			return nil
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Timers returns how far each pending timer is from now.
func (c *ManualClock) Timers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Duration, len(c.waiters))
	for i, w := range c.waiters {
		out[i] = w.at.Sub(c.now)
	}
	return out
}

// NextTimer returns how far the earliest pending timer is from now.
func (c *ManualClock) NextTimer() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiters) == 0 {
		return 0, false
	}
	next := c.waiters[0].at
	for _, w := range c.waiters[1:] {
		if w.at.Before(next) {
			next = w.at
		}
	}
	return next.Sub(c.now), true
}

// Advance moves the clock forward by d and fires every timer that is due.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// Set moves the clock to t (forward only) and fires every timer that is due.
func (c *ManualClock) Set(t time.Time) {
	if d := t.Sub(c.Now()); d > 0 {
		c.Advance(d)
	}
}

// Waiters returns how many timers are pending, so a test can wait until the
// code under test is asleep before it advances the clock.
func (c *ManualClock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}
