package runtime

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

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

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
		c = SystemClock{}
	}
	var entropy [10]byte
	_, _ = rand.Read(entropy[:]) // crypto/rand.Read never fails on supported platforms
	return wire.NewULID(uint64(c.Now().UnixMilli()), entropy)
}

// micros is t in Unix microseconds, the unit of every AGDX timestamp.
func micros(t time.Time) uint64 { return uint64(t.UnixMicro()) }
