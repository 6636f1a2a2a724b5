// Package batch holds a batching producer: records appended to one topic are
// queued and published together, in the background, when a record count, a
// byte size or a linger trips, whichever comes first. Each Append returns a
// Pending the caller waits on for the record's position or its publish error.
package batch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
)

// Defaults of Config, the reference runtime's.
const (
	// DefaultMaxRecords is the record count that flushes a batch.
	DefaultMaxRecords = 512
	// DefaultMaxBytes is the payload size, in bytes, that flushes a batch (1 MiB).
	DefaultMaxBytes = 1 << 20
	// DefaultLinger is the longest a queued record waits for a batch to fill.
	DefaultLinger = 5 * time.Millisecond
	// MinLinger is the floor of Config.Linger: a shorter linger would wake
	// the flusher for batches of one and buy nothing over plain publishing.
	MinLinger = time.Millisecond
)

// maxPrealloc caps the records a new batch makes room for up front, so a
// huge MaxRecords does not cost memory before records arrive.
const maxPrealloc = 1024

// ErrClosed is the error of a record appended after Close began.
var ErrClosed = errors.New("batch: producer closed")

// Publisher publishes records to a topic; *runtime.Client (which governs
// and retries) and runtime.Transport both satisfy it.
type Publisher interface {
	Publish(ctx context.Context, topic string, records ...runtime.Outgoing) ([]runtime.Position, error)
}

// Config bounds a batch; a zero field takes its default.
type Config struct {
	// MaxRecords flushes once this many records are queued (default 512).
	MaxRecords int
	// MaxBytes flushes once the queued payloads reach this many bytes
	// (default 1 MiB). A single record larger than it is published alone.
	MaxBytes int
	// Linger flushes a non-empty queue this long after its oldest record
	// arrived (default 5 ms, floored at MinLinger).
	Linger time.Duration
	// MaxQueued bounds the records waiting while a flush is in flight
	// (default 4 × MaxRecords): Append blocks at the bound until the flusher
	// catches up or the caller's context ends.
	MaxQueued int
	// Clock times the linger (default clock.System).
	Clock clock.Clock
}

// withDefaults validates c and fills its zero fields.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.MaxRecords < 0:
		return c, fmt.Errorf("batch: MaxRecords is %d; it must be positive (0 takes the default %d)", c.MaxRecords, DefaultMaxRecords)
	case c.MaxBytes < 0:
		return c, fmt.Errorf("batch: MaxBytes is %d; it must be positive (0 takes the default %d)", c.MaxBytes, DefaultMaxBytes)
	case c.Linger < 0:
		return c, fmt.Errorf("batch: Linger is %v; it must be positive (0 takes the default %v)", c.Linger, DefaultLinger)
	case c.MaxQueued < 0:
		return c, fmt.Errorf("batch: MaxQueued is %d; it must be positive (0 takes the default 4 × MaxRecords)", c.MaxQueued)
	}
	c.MaxRecords = cmp.Or(c.MaxRecords, DefaultMaxRecords)
	c.MaxBytes = cmp.Or(c.MaxBytes, DefaultMaxBytes)
	c.Linger = max(cmp.Or(c.Linger, DefaultLinger), MinLinger)
	c.MaxQueued = max(cmp.Or(c.MaxQueued, 4*c.MaxRecords), c.MaxRecords)
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
	return c, nil
}

// Pending is the outcome of one appended record, known once its batch was
// published or failed. Only Append makes one.
type Pending struct {
	r *result
	i int
}

// Done returns a channel closed once the outcome is known.
func (p Pending) Done() <-chan struct{} { return p.r.done }

// Wait returns where the record landed, or why it was not published; a
// context that ends first returns its error and leaves the record queued.
func (p Pending) Wait(ctx context.Context) (runtime.Position, error) {
	select {
	case <-p.r.done:
		if p.r.err != nil {
			return runtime.Position{}, p.r.err
		}
		return p.r.pos[p.i], nil
	case <-ctx.Done():
		return runtime.Position{}, ctx.Err()
	}
}

// result is one batch: its records while it fills, then its outcome, shared
// by the Pending of every record in it so that appending allocates nothing
// per record.
type result struct {
	recs  []runtime.Outgoing
	bytes int
	first time.Time // when the first record arrived, for the linger

	done chan struct{}
	pos  []runtime.Position
	err  error
}

// failed returns a Pending already resolved with err.
func failed(err error) Pending {
	r := &result{done: make(chan struct{}), err: err}
	close(r.done)
	return Pending{r: r}
}

// Producer batches records for one topic. Every method is safe for
// concurrent use; records appended by one goroutine are published in the
// order it appended them.
type Producer struct {
	ctx   context.Context
	pub   Publisher
	topic string
	cfg   Config

	wake    chan struct{} // the flusher has something to look at
	flushes chan chan error
	quit    chan struct{}
	stopped chan struct{}

	// mu guards what Append and the flusher share. Append holds it only to
	// add one record, so appending costs a lock and no channel operation:
	// the flusher is woken once per batch, and appenders waiting for room
	// once per published batch.
	mu      sync.Mutex
	open    *result       // the batch filling up, nil when none
	sealed  []*result     // full batches waiting for the flusher
	queued  int           // records appended and not yet resolved, at most MaxQueued
	room    chan struct{} // closed when queued records resolve; nil while no appender waits
	armed   bool          // the flusher's linger timer is running, so a new batch needs no wake
	closed  bool
	refused error // what Append answers once closed: ErrClosed or the ended ctx

	lastErr error // the final flush's first error; read after stopped closes
}

// New starts a batching producer publishing to topic through pub. ctx bounds
// the background flushes: once it ends, queued records fail with its error.
func New(ctx context.Context, pub Publisher, topic string, cfg Config) (*Producer, error) {
	if pub == nil {
		return nil, errors.New("batch: no publisher")
	}
	if topic == "" {
		return nil, errors.New("batch: empty topic name")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	b := &Producer{
		ctx: ctx, pub: pub, topic: topic, cfg: cfg,
		wake:    make(chan struct{}, 1),
		flushes: make(chan chan error),
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go b.run()
	return b, nil
}

// Append queues rec and returns its Pending at once; it blocks only while
// MaxQueued records wait, and then returns a Pending holding ctx's error
// when ctx ends first. After Close the Pending holds ErrClosed.
func (b *Producer) Append(ctx context.Context, rec runtime.Outgoing) Pending {
	b.mu.Lock()
	for !b.closed && b.queued >= b.cfg.MaxQueued {
		if b.room == nil {
			b.room = make(chan struct{})
		}
		room := b.room
		b.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return failed(fmt.Errorf("batch: append to %s: %w", b.topic, ctx.Err()))
		}
		b.mu.Lock()
	}
	if b.closed {
		refused := b.refused
		b.mu.Unlock()
		return failed(refused)
	}
	b.queued++
	wake := false
	if b.open != nil && b.open.bytes+len(rec.Payload) > b.cfg.MaxBytes {
		b.seal()
		wake = true
	}
	if b.open == nil {
		// Room for the records the batch will likely hold, judged by this
		// one's size, so filling it does not regrow the slice.
		likely := min(b.cfg.MaxRecords, maxPrealloc, b.cfg.MaxBytes/(len(rec.Payload)+1)+1)
		b.open = &result{first: b.cfg.Clock.Now(), done: make(chan struct{}), recs: make([]runtime.Outgoing, 0, likely)}
		wake = wake || !b.armed // the flusher starts the linger unless its timer runs
	}
	r := b.open
	r.recs = append(r.recs, rec)
	r.bytes += len(rec.Payload)
	i := len(r.recs) - 1
	if len(r.recs) >= b.cfg.MaxRecords || r.bytes >= b.cfg.MaxBytes {
		b.seal()
		wake = true
	}
	b.mu.Unlock()
	if wake {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
	return Pending{r: r, i: i}
}

// seal hands the open batch to the flusher; b.mu is held.
func (b *Producer) seal() {
	if b.open != nil {
		b.sealed = append(b.sealed, b.open)
		b.open = nil
	}
}

// Flush publishes everything queued and returns the first publish error of
// the batches it sent (each record's Pending has its own).
func (b *Producer) Flush(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case b.flushes <- reply:
	case <-b.stopped:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close refuses further records, publishes what is queued and stops the
// flusher, returning the first publish error of that last flush. Closing
// twice is a no-op; a ctx that ends first returns its error while the last
// flush goes on in the background.
func (b *Producer) Close(ctx context.Context) error {
	b.mu.Lock()
	if !b.closed {
		b.closed, b.refused = true, ErrClosed
		close(b.quit)
	}
	b.mu.Unlock()
	select {
	case <-b.stopped:
		return b.lastErr
	case <-ctx.Done():
		return ctx.Err()
	}
}
