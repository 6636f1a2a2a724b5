package clock_test

import (
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
)

// fixed is a Clock stopped at one instant.
type fixed time.Time

func (f fixed) Now() time.Time                       { return time.Time(f) }
func (f fixed) After(time.Duration) <-chan time.Time { return make(chan time.Time) }

// TestULIDSourceStampsItsClocksMilliseconds: a ULID's first 48 bits are the
// Unix milliseconds of the source's clock, and two ids of one instant
// differ by their entropy.
func TestULIDSourceStampsItsClocksMilliseconds(t *testing.T) {
	at := time.UnixMilli(0x0123_4567_89ab)
	src := clock.ULIDSource{Clock: fixed(at)}
	a, b := src.NewID(), src.NewID()
	hi, _ := a.Uint128()
	if got := hi >> 16; got != uint64(at.UnixMilli()) {
		t.Fatalf("the id's time is %#x, want %#x", got, at.UnixMilli())
	}
	if a == b {
		t.Fatal("two ids minted at one instant are equal")
	}
}

// TestULIDSourceZeroValueUsesTheSystemClock: without a Clock the id's time
// is the wall clock's.
func TestULIDSourceZeroValueUsesTheSystemClock(t *testing.T) {
	before := clock.System{}.Now().UnixMilli()
	hi, _ := clock.ULIDSource{}.NewID().Uint128()
	after := clock.System{}.Now().UnixMilli()
	if ms := int64(hi >> 16); ms < before || ms > after {
		t.Fatalf("the id's time %d is outside [%d, %d]", ms, before, after)
	}
}
