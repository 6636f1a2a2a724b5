package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// stepClock is a clock whose timers fire only when the test fires them.
type stepClock struct {
	mu     sync.Mutex
	timers []chan time.Time
	asked  chan time.Duration
}

func newStepClock() *stepClock { return &stepClock{asked: make(chan time.Duration, 8)} }

func (c *stepClock) Now() time.Time { return time.Unix(0, 0) }

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	c.timers = append(c.timers, ch)
	c.mu.Unlock()
	c.asked <- d
	return ch
}

// fire fires every timer asked for so far.
func (c *stepClock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.timers {
		ch <- time.Unix(0, 0)
	}
	c.timers = nil
}

func TestSleepReturnsWhenTheInjectedClockFires(t *testing.T) {
	clk := newStepClock()
	done := make(chan error, 1)
	go func() { done <- sleep(t.Context(), clk, time.Hour) }()
	if d := <-clk.asked; d != time.Hour {
		t.Fatalf("sleep asked the clock for %v, want 1h", d)
	}
	select {
	case err := <-done:
		t.Fatalf("sleep returned %v before its clock fired", err)
	default:
	}
	clk.fire()
	if err := <-done; err != nil {
		t.Fatalf("sleep returned %v once its clock fired, want nil", err)
	}
}

func TestSleepReturnsTheContextsErrorWhenCancelled(t *testing.T) {
	clk := newStepClock()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- sleep(ctx, clk, time.Hour) }()
	<-clk.asked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("sleep returned %v on cancellation, want context.Canceled", err)
	}
}

func TestSleepOnAnEndedContextDoesNotWait(t *testing.T) {
	clk := newStepClock()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := sleep(ctx, clk, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleep on an ended context returned %v, want context.Canceled", err)
	}
	if len(clk.asked) != 0 {
		t.Fatal("sleep on an ended context armed a timer")
	}
}
