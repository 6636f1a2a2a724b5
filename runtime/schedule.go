package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// The pieces the scheduler (scheduler.go) is made of: the queue bound, the
// first failure, the intake loop that feeds the key queues, the record loop
// each worker handles a turn of records with, and the drain at the end.

// queueBound bounds the records the scheduler holds in memory, queued or
// running, and their bytes, across all of its queues (MaxQueuedRecords,
// MaxQueuedBytes); Consumer.Queued reads it. It is taken and given back
// under the scheduler's lock; the counts are atomic for Queued.
type queueBound struct {
	records, bytes atomic.Int64 // taken
	maxRecords     int64
	maxBytes       int64
}

func newQueueBound(cfg ConsumerConfig) *queueBound {
	return &queueBound{maxRecords: int64(cfg.MaxQueuedRecords), maxBytes: int64(cfg.MaxQueuedBytes)}
}

// size is what a record charges the bytes bound: never 0, never more than
// the whole bound, so a record always fits an empty bound.
func (b *queueBound) size(rec *Incoming) int64 { return min(max(int64(rec.Size()), 1), b.maxBytes) }

// tryTake takes one record of size bytes when it fits now.
func (b *queueBound) tryTake(size int64) bool {
	if b.records.Load() >= b.maxRecords || b.bytes.Load()+size > b.maxBytes {
		return false
	}
	b.records.Add(1)
	b.bytes.Add(size)
	return true
}

// give gives back one record of size bytes.
func (b *queueBound) give(size int64) {
	b.records.Add(-1)
	b.bytes.Add(-size)
}

// queued returns the records and bytes the bound holds.
func (b *queueBound) queued() (records, bytes int64) { return b.records.Load(), b.bytes.Load() }

// failState is a scheduler's first failure: it stops intake (wake is
// closed) and is what the scheduler returns once drained.
type failState struct {
	mu   sync.Mutex
	err  error
	wake chan struct{}
}

func newFailState() *failState { return &failState{wake: make(chan struct{})} }

// fail records err when it is the first failure, and reports whether it was.
func (f *failState) fail(err error) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return false
	}
	f.err = err
	close(f.wake)
	return true
}

// failure returns the first failure, or nil.
func (f *failState) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// errIntakeStopped ends an intake loop without a failure (a graceful stop
// reached while it waited for room).
var errIntakeStopped = errors.New("intake stopped")

// intake is the scheduler's intake loop: it hands
// each polled batch (decoded ahead when decode is set and the loop was
// busy) to take, until the consumer stops (nil), a poll fails, the
// scheduler failed (fs), a commit failed, or take fails (errIntakeStopped:
// nil).
func (s *session) intake(decode bool, fs *failState, k *commitBehind, take func(next polled) error) error {
	pf := s.startPrefetch(decode)
	defer pf.close()
	for {
		if err := fs.failure(); err != nil {
			return err
		}
		next, ok := pf.nextOrWake(fs.wake, k.failed)
		if !ok {
			return nil
		}
		if next.err != nil {
			return next.err
		}
		if err := k.kick(); err != nil {
			return err
		}
		if err := take(next); err != nil {
			if errors.Is(err, errIntakeStopped) {
				return nil
			}
			return err
		}
	}
}

// recordLoop handles runs of records in log order on one goroutine: each
// of the scheduler's workers has one. It owns the messages its records
// decode into (a slab kept from run to run while the worker is busy, and
// dropped by idle) and, under a BatchDeduplicator, the claims of the run
// at hand.
type recordLoop struct {
	c       *Consumer
	ctx     context.Context // the work context, carrying cs
	cs      *claimSet
	slab    messageSlab
	decoded []decodedRecord
}

// newRecordLoop returns a record loop of s whose records run under ctx, a
// context of the work context.
func (s *session) newRecordLoop(ctx context.Context, k *commitBehind) *recordLoop {
	l := &recordLoop{c: s.c, ctx: ctx, cs: s.newClaimSet(k)}
	if l.cs != nil {
		l.ctx = withClaims(l.ctx, l.cs)
	}
	return l
}

// run handles recs in order: it decodes them (pre is their decoding when
// the prefetcher did it), claims their idempotency keys in one call, runs
// each through the pipeline, and releases the claims no record used. after
// hears each record's result (a failed claim is the first record's) and
// returns false to start no further record. run returns how many records
// after heard of, and the failure that ended the run.
//
// Without claims to make, a record is decoded only as its turn comes, so a
// run waiting behind a slow handler holds its records, not their messages.
// ahead is how many records the loop expects to decode soon after this
// run, so runs of one record share the slab's allocations.
func (l *recordLoop) run(recs []*Incoming, pre []decodedRecord, ahead int, after func(i int, err error) bool) (int, error) {
	if pre == nil {
		l.slab.expect(len(recs) + ahead)
	}
	decoded := pre
	if decoded == nil && l.cs != nil {
		// Decode the run first, to claim its keys in one call.
		decoded = decodeAll(l.c, &l.slab, recs, nil, l.decoded)
		l.decoded = decoded
	}
	defer clear(decoded) // no message of the run stays alive through the loop
	if l.cs != nil {
		if err := l.cs.claim(l.ctx, decoded); err != nil {
			after(0, err)
			return 1, err
		}
		defer l.cs.release(l.ctx)
	}
	for i := range recs {
		var dec decodedRecord
		if decoded != nil {
			dec = decoded[i]
		} else {
			dec = l.c.decode(&l.slab, recs[i])
		}
		_, err := l.c.process(l.ctx, recs[i], dec)
		if !after(i, err) || err != nil {
			return i + 1, err
		}
	}
	return len(recs), nil
}

// idle drops the slab, so an idle worker keeps no message alive.
func (l *recordLoop) idle() { l.slab.reset(0) }

// drain waits for the handlers to end (wait) and commits what was handled,
// even after a failure; a graceful stop is bounded by the supervisor's
// grace, and a failure (loopErr) gets the same bound here, after which
// handlers are cancelled and what is left stays uncommitted.
func (s *session) drain(loopErr error, wait func(), k *commitBehind, failure func() error) error {
	if loopErr != nil {
		drained := make(chan struct{})
		go func() {
			select {
			case <-s.c.clock.After(s.c.cfg.ShutdownGrace):
				s.cancelWork()
			case <-drained:
			}
		}()
		wait()
		close(drained)
	} else {
		wait()
	}
	errs := []error{loopErr}
	for _, err := range []error{k.flush(), failure()} {
		if err != nil && !errors.Is(loopErr, err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
