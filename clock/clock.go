// Package clock holds what the runtime takes from outside to tell the time
// and to mint record ids, so that a test can inject both: the Clock
// interface and the wall clock (System), the IDSource interface and the
// ULIDs minted from a clock (ULIDSource). The runtime's ClientConfig takes
// them; lasertest.ManualClock is a Clock driven by hand.
package clock

import (
	"crypto/rand"
	"time"

	"github.com/lasergo/laser/wire"
)

// Clock tells the time; the runtime reads it for deadlines, fences, retry
// backoff and shutdown grace so tests can drive time by hand.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has elapsed on this clock.
	After(d time.Duration) <-chan time.Time
}

// System is the wall clock, the runtime's default.
type System struct{}

// Now returns time.Now.
func (System) Now() time.Time { return time.Now() }

// After returns time.After.
func (System) After(d time.Duration) <-chan time.Time { return time.After(d) }

// IDSource mints fresh ids (records, conversations, correlations).
type IDSource interface {
	NewID() wire.ID
}

// ULIDSource mints ULIDs from a clock and crypto/rand; the zero value uses
// the system clock.
type ULIDSource struct {
	Clock Clock
}

// NewID returns a fresh ULID.
func (s ULIDSource) NewID() wire.ID {
	c := s.Clock
	if c == nil {
		c = System{}
	}
	var entropy [10]byte
	_, _ = rand.Read(entropy[:]) // crypto/rand.Read never fails on supported platforms
	return wire.NewULID(uint64(c.Now().UnixMilli()), entropy)
}
