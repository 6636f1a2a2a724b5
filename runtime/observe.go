package runtime

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/lasergo/laser/wire"
)

// Result is how the consumer finished with a record.
type Result uint8

// Results of a Delivery.
const (
	// ResultFailed: the consumer stopped with the record uncommitted (a
	// failed dead-letter publish, a hard stop, a deduplicator error); it is
	// delivered again.
	ResultFailed Result = iota
	// ResultHandled: an attempt of the handler succeeded.
	ResultHandled
	// ResultSkipped: the record was targeted at another agent.
	ResultSkipped
	// ResultDropped: a gate dropped it (see DroppedBy).
	ResultDropped
	// ResultDeadLettered: it was dead-lettered (see Reason).
	ResultDeadLettered
)

var resultNames = [...]string{"failed", "handled", "skipped", "dropped", "dead_lettered"}

// String returns the result's name as metrics label it.
func (r Result) String() string { return resultNames[r] }

// DropGate names the gate that dropped a record.
type DropGate string

// The gates that drop records.
const (
	DropDuplicate DropGate = "duplicate" // its idempotency key was seen
	DropFence     DropGate = "fence"     // its fence token was superseded
	DropReplay    DropGate = "replay"    // its signed record id was seen
)

// Delivery is one record as a ConsumerObserver sees it: the fields above the
// line are set before next runs, the rest once it returned.
type Delivery struct {
	Topic, Group, Agent string
	Record              *Incoming
	// Verifier is the consumer's (nil when it verifies nothing): an
	// observer that trusts what a record carries (trace context) checks
	// the record with it first, since it runs before the signature gate.
	Verifier Verifier

	// Message is the decoded record, nil when it did not decode.
	Message *Message
	// Result is how the record ended.
	Result Result
	// DroppedBy is the gate that dropped it, for ResultDropped.
	DroppedBy DropGate
	// Reason is the dead-letter reason, for ResultDeadLettered.
	Reason wire.DeadLetterReason
	// Attempts is how many handler attempts ran.
	Attempts int
	// Err is the failure: the handler's last error or the decode error for
	// a parked record, the stop cause for a failed one; nil otherwise.
	Err error
}

// decoded and droppedBy are called by the pipeline; a nil Delivery (no
// observer) ignores them.
func (d *Delivery) decoded(m *Message) {
	if d != nil {
		d.Message = m
	}
}

func (d *Delivery) droppedBy(g DropGate) {
	if d != nil {
		d.DroppedBy = g
	}
}

// finish fills in the result once the pipeline returned.
func (d *Delivery) finish(o outcome, err error) {
	if err != nil {
		d.Result, d.Err = ResultFailed, err
		return
	}
	switch o {
	case handled:
		d.Result = ResultHandled
	case skipped:
		d.Result = ResultSkipped
	case dropped:
		d.Result = ResultDropped
	case parked:
		d.Result = ResultDeadLettered
	}
	if m := d.Message; m != nil {
		d.Attempts = m.hctx.attempt
		if dl := m.parked; dl != nil {
			d.Reason, d.Attempts, d.Err = dl.Reason, int(dl.Attempts), m.parkCause
		}
	} else if o == parked {
		d.Reason = wire.ReasonDecodeFailed
	}
}

// consumerHooks is what the consumer's middleware adds to it: the chain an
// attempt runs, the record observers, and what observers sample.
type consumerHooks struct {
	chain     func(*Ctx) error
	observers []ConsumerObserver
	bound     atomic.Pointer[queueBound] // the queue bound of the running scheduler, if it has one
	sched     atomic.Pointer[scheduler]  // the running scheduler, for tests to see its state

	mu      sync.Mutex
	handled map[uint32]uint64 // next offset to handle per partition, when observed
}

// middleware returns the client's middleware followed by the consumer's.
func (c *Consumer) middleware() []Middleware {
	var client []Middleware
	if c.cfg.Client != nil {
		client = c.cfg.Client.opts.Middleware
	}
	return slices.Concat(client, c.cfg.Middleware)
}

// installHooks builds the attempt chain and finds the observers.
func (c *Consumer) installHooks() {
	mws := c.middleware()
	c.hooks.chain = attemptChain(mws, answeringFailf(c.cfg.Handler.Handle))
	for _, mw := range mws {
		if o, ok := mw.(ConsumerObserver); ok {
			c.hooks.observers = append(c.hooks.observers, o)
		}
	}
	for _, o := range c.hooks.observers {
		o.ObserveConsumer(c)
	}
}

// process runs one decoded record through the pipeline, inside the record
// observers when there are any (decoding has no state, so the loops decode
// ahead; see recordLoop and prefetcher). A nil error means the record's
// offset may be committed; an error stops the consumer with the offset
// uncommitted (a failed dead-letter publish, a cancelled context).
func (c *Consumer) process(ctx context.Context, rec *Incoming, dec decodedRecord) (outcome, error) {
	if len(c.hooks.observers) == 0 {
		return c.pipeline(ctx, rec, dec, nil)
	}
	d := &Delivery{Topic: c.cfg.Topic, Group: c.cfg.Group, Agent: c.cfg.Agent, Record: rec, Verifier: c.cfg.Verifier}
	var (
		o   outcome
		err error
		ran bool
	)
	run := func(ctx context.Context) {
		if ran {
			return
		}
		ran = true
		o, err = c.pipeline(ctx, rec, dec, d)
		d.finish(o, err)
	}
	for i := len(c.hooks.observers) - 1; i >= 0; i-- {
		obs, inner := c.hooks.observers[i], run
		run = func(ctx context.Context) { obs.ObserveRecord(ctx, d, inner) }
	}
	run(ctx)
	if !ran { // an observer that forgot to call next must not lose the record
		o, err = c.pipeline(ctx, rec, dec, d)
		d.finish(o, err)
	}
	if err == nil {
		c.hooks.mu.Lock()
		if c.hooks.handled == nil {
			c.hooks.handled = make(map[uint32]uint64)
		}
		c.hooks.handled[rec.Partition] = rec.Offset + 1
		c.hooks.mu.Unlock()
	}
	return o, err
}

// Group returns the consumer's group.
func (c *Consumer) Group() string { return c.cfg.Group }

// Topic returns the topic the consumer reads.
func (c *Consumer) Topic() string { return c.cfg.Topic }

// Running reports whether a Run of the consumer is under way.
func (c *Consumer) Running() bool { return c.running.Load() }

// Queued returns how many records, and how many of their bytes, the
// scheduler holds now for its workers, queued or running (both 0 for a
// consumer that has not run; records handled inline by the poller, as
// under Serial, are never queued).
func (c *Consumer) Queued() (records, bytes int64) {
	if b := c.hooks.bound.Load(); b != nil {
		return b.queued()
	}
	return 0, 0
}

// Lag returns, per partition this consumer has finished records of (while
// a ConsumerObserver watches it), how many records the partition holds past
// the last one it finished: the consumer lag.
func (c *Consumer) Lag(ctx context.Context) (map[uint32]uint64, error) {
	c.hooks.mu.Lock()
	next := make(map[uint32]uint64, len(c.hooks.handled))
	for p, o := range c.hooks.handled {
		next[p] = o
	}
	c.hooks.mu.Unlock()
	lag := make(map[uint32]uint64, len(next))
	for p, o := range next {
		end, err := c.t.NextOffset(ctx, c.cfg.Topic, p)
		if err != nil {
			return lag, err
		}
		lag[p] = end - min(o, end)
	}
	return lag, nil
}
