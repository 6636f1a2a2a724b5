package runtime

import (
	"context"
	"math"
	"time"

	"github.com/lasergo/laser/clock"
)

// RetryPolicy says how often the consumer runs a handler that keeps failing
// with retryable errors, and how long it waits in between.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts before the message is
	// dead-lettered as retry_exhausted; 1 runs the handler once. In a
	// Tuning, 0 means the default, 5.
	MaxAttempts int
	// BaseDelay is the wait after the first failure, doubled after each
	// further one with no cap and no jitter. Default 200 ms.
	BaseDelay time.Duration
}

// Delay is the wait after the failed attempt with zero-based index attempt:
// BaseDelay × 2^min(attempt, 16), saturating instead of overflowing.
func (p RetryPolicy) Delay(attempt int) time.Duration {
	if attempt < 0 {
		attempt = 0
	}
	if attempt > 16 {
		attempt = 16
	}
	factor := time.Duration(1) << attempt
	if p.BaseDelay > 0 && p.BaseDelay > time.Duration(math.MaxInt64)/factor {
		return time.Duration(math.MaxInt64)
	}
	return p.BaseDelay * factor
}

// pollBackoff is the wait after the n-th consecutive poll failure (n ≥ 1):
// 50 ms doubling, capped at one second.
func pollBackoff(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 6 {
		return time.Second
	}
	d := 50 * time.Millisecond << (n - 1)
	if d > time.Second {
		d = time.Second
	}
	return d
}

// sleep waits d on clk and returns nil, or returns ctx's error as soon as
// ctx ends first. Every wait of the runtime between two tries goes through
// it: a handler's retry on the consumer's clock, the backoffs on real time.
func sleep(ctx context.Context, clk clock.Clock, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-clk.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff waits pollBackoff(attempt) after a call to the outside (a
// commit, a deduplicator) failed transiently, or returns ctx's error. It
// waits real time, as polling does: the store recovers in real time
// whatever clock the consumer was given, and no semantic a test pins
// depends on how long the wait lasts.
func backoff(ctx context.Context, attempt int) error {
	return sleep(ctx, clock.System{}, pollBackoff(attempt))
}
