package iggy

import (
	"log/slog"
	"time"

	"github.com/lasergo/laser/runtime"
)

// Option configures a Transport.
type Option func(*config)

type config struct {
	callTimeout      time.Duration
	dialTimeout      time.Duration
	backoffBase      time.Duration
	backoffMax       time.Duration
	logger           *slog.Logger
	clock            runtime.Clock
	partitionRefresh time.Duration // how often subscriptions and Publish re-read the partition count
	maxPollBytes     int           // the most reply bytes one subscription Poll takes in
}

func defaultConfig() config {
	return config{
		callTimeout:      5 * time.Second,
		dialTimeout:      5 * time.Second,
		backoffBase:      100 * time.Millisecond,
		backoffMax:       5 * time.Second,
		logger:           slog.New(slog.DiscardHandler),
		clock:            runtime.SystemClock{},
		partitionRefresh: 5 * time.Second,
		maxPollBytes:     runtime.DefaultMaxQueuedBytes,
	}
}

// WithMaxPollBytes bounds the reply bytes one subscription Poll takes in,
// over all the partitions it reads; default 64 MiB, the consumer's default
// MaxQueuedBytes, so one poll cannot hold more than the queue it feeds
// (without it a poll of PollBatch records accepted replies up to 1 GiB).
// A partition whose reply would exceed what is left is polled again for
// fewer records (its reply read and dropped, never kept); a single record
// larger than the bound still comes alone, as the first of a poll. The
// bound applies to the raw poll path; a link polling through the SDK's
// PollMessages is not bounded by it. Values <= 0 keep the default.
func WithMaxPollBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxPollBytes = n
		}
	}
}

// WithCallTimeout bounds every call to the server; default 5 s. A call that
// gets no answer in time fails with a transient ErrTimeout and its
// connection is abandoned, to be rebuilt on the next call. Values <= 0 keep
// the default.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.callTimeout = d
		}
	}
}

// WithDialTimeout bounds connecting (the TCP dial and the SDK's setup,
// before the login, which the call timeout bounds); default 5 s. Values
// <= 0 keep the default.
func WithDialTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.dialTimeout = d
		}
	}
}

// WithReconnectBackoff sets the wait before reconnecting after a failed
// attempt: base, doubled per further failure, capped at max; defaults
// 100 ms and 5 s. The first attempt after a connection broke is immediate.
// Values <= 0 keep the defaults.
func WithReconnectBackoff(base, max time.Duration) Option {
	return func(c *config) {
		if base > 0 {
			c.backoffBase = base
		}
		if max > 0 {
			c.backoffMax = max
		}
		if c.backoffMax < c.backoffBase {
			c.backoffMax = c.backoffBase
		}
	}
}

// WithLogger sets where connection losses and reconnects are logged;
// default: discarded. (The SDK itself writes a few lines per login to the
// standard log package, which no option can silence.)
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithClock sets the clock of call and dial timeouts and of the reconnect
// backoff; default runtime.SystemClock.
func WithClock(clock runtime.Clock) Option {
	return func(c *config) {
		if clock != nil {
			c.clock = clock
		}
	}
}

// backoff is the wait after the n-th failed reconnect (n >= 1).
func (c *config) backoff(n int) time.Duration {
	d := c.backoffBase
	for i := 1; i < n && d < c.backoffMax; i++ {
		d *= 2
	}
	return min(d, c.backoffMax)
}
