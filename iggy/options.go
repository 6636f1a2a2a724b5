package iggy

import (
	"crypto/tls"
	"log/slog"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
)

// Config configures a Transport; the zero value is usable, and a field
// left zero (or set <= 0) takes its default.
type Config struct {
	// CallTimeout bounds every call to the server; default 5 s. A call that
	// gets no answer in time fails with a transient ErrTimeout and its
	// connection is abandoned, to be rebuilt on the next call.
	CallTimeout time.Duration
	// DialTimeout bounds connecting (the TCP dial and the SDK's setup,
	// before the login, which the call timeout bounds); default 5 s.
	DialTimeout time.Duration
	// ReconnectBackoff is the wait before reconnecting after a failed
	// attempt, doubled per further failure up to ReconnectBackoffMax;
	// defaults 100 ms and 5 s. The first attempt after a connection broke
	// is immediate.
	ReconnectBackoff    time.Duration
	ReconnectBackoffMax time.Duration
	// Logger is where connection losses and reconnects are logged; default:
	// discarded. (The SDK itself writes a few lines per login to the
	// standard log package, which nothing here can silence.)
	Logger *slog.Logger
	// Clock times call and dial timeouts and the reconnect backoff; default
	// clock.System.
	Clock clock.Clock
	// MaxPollBytes bounds the reply bytes one subscription Poll takes in,
	// over all the partitions it reads; default 64 MiB, the consumer's
	// default MaxQueuedBytes, so one poll cannot hold more than the queue
	// it feeds. A partition whose reply would exceed what is left is polled
	// again for fewer records (its reply read and dropped, never kept); a
	// single record larger than the bound still comes alone, as the first
	// of a poll. The bound applies to the raw poll path; a link polling
	// through the SDK's PollMessages is not bounded by it.
	MaxPollBytes int
	// TLS, when set, connects with TLS using this configuration (cloned
	// for each connection): the VSR protocol only, Dial refuses it with the
	// 0.8 one. The connection string's tls_domain, when given, replaces its
	// ServerName, and an empty ServerName is the connection string's host,
	// also on a redirect to the cluster's leader; a tls_ca_file of the
	// connection string replaces its RootCAs. Unset, TLS follows the connection string
	// (tls=true: the system's roots, or tls_ca_file). A failed handshake fails
	// the connection: there is never a fallback to plaintext.
	TLS *tls.Config
}

type config struct {
	callTimeout      time.Duration
	dialTimeout      time.Duration
	backoffBase      time.Duration
	backoffMax       time.Duration
	logger           *slog.Logger
	clock            clock.Clock
	partitionRefresh time.Duration // how often subscriptions and Publish re-read the partition count
	maxPollBytes     int           // the most reply bytes one subscription Poll takes in
	tls              *tls.Config   // as Config.TLS
}

// resolve is cfg with its defaults filled in.
func (cfg Config) resolve() config {
	c := config{
		callTimeout:      5 * time.Second,
		dialTimeout:      5 * time.Second,
		backoffBase:      100 * time.Millisecond,
		backoffMax:       5 * time.Second,
		logger:           slog.New(slog.DiscardHandler),
		clock:            clock.System{},
		partitionRefresh: 5 * time.Second,
		maxPollBytes:     runtime.DefaultMaxQueuedBytes,
	}
	if cfg.CallTimeout > 0 {
		c.callTimeout = cfg.CallTimeout
	}
	if cfg.DialTimeout > 0 {
		c.dialTimeout = cfg.DialTimeout
	}
	if cfg.ReconnectBackoff > 0 {
		c.backoffBase = cfg.ReconnectBackoff
	}
	if cfg.ReconnectBackoffMax > 0 {
		c.backoffMax = cfg.ReconnectBackoffMax
	}
	c.backoffMax = max(c.backoffMax, c.backoffBase)
	if cfg.Logger != nil {
		c.logger = cfg.Logger
	}
	if cfg.Clock != nil {
		c.clock = cfg.Clock
	}
	if cfg.MaxPollBytes > 0 {
		c.maxPollBytes = cfg.MaxPollBytes
	}
	c.tls = cfg.TLS
	return c
}

// backoff is the wait after the n-th failed reconnect (n >= 1).
func (c *config) backoff(n int) time.Duration {
	d := c.backoffBase
	for i := 1; i < n && d < c.backoffMax; i++ {
		d *= 2
	}
	return min(d, c.backoffMax)
}
