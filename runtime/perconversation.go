package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	goruntime "runtime"

	"github.com/lasergo/laser/wire"
)

// PerConversation runs up to n handlers at once, on one partition or many:
// the records of one conversation are handled strictly one at a time in
// log order, records of different conversations in parallel. Records
// without a conversation, and records that do not decode, are ordered by
// their partition instead (one at a time per partition, as PerPartition).
// Offsets are committed per partition up to the newest record below which
// every record was handled, skipped or parked. It suits handlers that wait
// on I/O (a model, an API): throughput grows with n instead of with the
// partition count. See docs/concurrency.md.
func PerConversation(n int) Concurrency { return Concurrency{Handlers: max(n, 1)} }

// OrderedBy returns c ordering records by key instead of by conversation:
// records with the same key are handled one at a time in log order (per
// entity: an order id, a user). key runs for every decoded record, before
// any gate, on the intake goroutine and again on a worker reading a hot
// key's backlog back from the log, so it must be fast, safe for concurrent
// use, and must not keep m; an empty key (or a panic) orders the record by
// its partition. Only PerConversation honours it.
func (c Concurrency) OrderedBy(key func(m *Message) string) Concurrency {
	c.orderBy = &orderKeyFunc{key: key}
	return c
}

// orderKeyFunc holds the key function of OrderedBy.
type orderKeyFunc struct{ key func(*Message) string }

// orderKey returns OrderedBy's key function, or nil.
func (c Concurrency) orderKey() func(*Message) string {
	if c.orderBy == nil {
		return nil
	}
	return c.orderBy.key
}

// String names the mode: "serial", "lanes=4", "perconversation=256".
func (c Concurrency) String() string {
	switch {
	case c.Handlers > 0:
		return "perconversation=" + strconv.Itoa(c.Handlers)
	case c.Lanes > 0:
		return "lanes=" + strconv.Itoa(c.Lanes)
	}
	return "serial"
}

const (
	// keyShareDivisor bounds the queue share of one key: at most
	// 1/keyShareDivisor of MaxQueuedRecords and of MaxQueuedBytes wait in
	// memory behind one key. Further records of the key on the same
	// partition are skipped by intake and read from the log again once the
	// key has worked through what it holds (its backlog), so a key stuck on
	// a slow record, however many records follow it, neither fills the
	// queue nor stalls intake for the others.
	keyShareDivisor = 4
	// spanFactor bounds the records of one partition taken past its
	// watermark to spanFactor × MaxQueuedRecords: it bounds the watermark's
	// memory and what a crash redelivers while one record holds its key.
	spanFactor = 8
	// fastHandler is the average handling time below which handing records
	// to more workers than there are processors costs more than it gains:
	// then at most GOMAXPROCS workers run, unless the ready keys wait
	// longer than stallWait for any record to finish (see watchLocked).
	fastHandler = 50 * time.Microsecond
	stallWait   = time.Millisecond
)

// orderKey is the unit of order of a record: a conversation, a key of
// Concurrency.OrderKey, or (neither) its partition.
type orderKey struct {
	conv      wire.ID
	name      string
	partition uint32
	byName    bool
}

// keyJob is one record waiting for, or being handled by, its key's worker.
type keyJob struct {
	rec Incoming
	decodedRecord
	size int64
	mark markTicket
	// deferred is set for a record beyond its key's share on a partition
	// other than its backlog's: only its position is kept, and it is read
	// from the log again when it starts.
	deferred bool
	// backlogged is set for a record read again from its key's backlog:
	// it holds no ticket and charges nothing; its backlog's pin moves past
	// it once it finished. noop: the backlog held no further record.
	backlogged, noop bool
}

// keyBacklog is what intake skipped of one hot key on one partition: the
// key's records from at on, up to what intake has seen of the partition,
// read again from the log once the key's queue is empty. The pin holds
// the partition's mark below at.
type keyBacklog struct {
	pin *markPin
	at  uint64     // the next offset to look at
	buf []Incoming // records read ahead, from at on
	// ahead is set while buf holds a read batch counted in
	// keyedSet.aheads.
	ahead bool
}

// keyQueue is one key's records not yet started, oldest first.
type keyQueue struct {
	key  orderKey
	jobs []keyJob // jobs[head:] wait
	head int
	// held is how many waiting records are kept in memory (not deferred).
	held int
	// bytes is what the key's waiting and running records charge.
	bytes int64
	// scheduled is set while the key is in the ready list or held by a
	// worker, so it is never handled by two workers at once.
	scheduled bool
	next      *keyQueue // ready list link
	// backlog, when set, holds the key's records intake skipped.
	backlog *keyBacklog
}

// pending reports whether the key has records to start: queued or in its
// backlog.
func (q *keyQueue) pending() bool { return q.waiting() > 0 || q.backlog != nil }

func (q *keyQueue) waiting() int { return len(q.jobs) - q.head }

func (q *keyQueue) pop() keyJob {
	j := q.jobs[q.head]
	q.jobs[q.head] = keyJob{}
	q.head++
	if !j.deferred {
		q.held--
	}
	if q.head == len(q.jobs) {
		q.jobs, q.head = q.jobs[:0], 0
	}
	return j
}

// keyWorker is a goroutine that handles keys, one record at a time.
type keyWorker struct {
	ks   *keyedSet
	next chan *keyQueue // a key handed to this idle worker, with its slot
}

// keyedSet is the PerConversation scheduler: the intake loop queues each
// record behind its key, and at most n workers at a time (those holding a
// slot) handle one record of a key each. A worker that finished a record
// moves its key to the back of the ready list when more records wait, so
// keys take turns. All of it is guarded by mu.
type keyedSet struct {
	s      *session
	n      int
	custom func(*Message) string
	bound  *queueBound
	fs     *failState
	share  int   // records one key may hold
	shareB int64 // bytes one key may hold
	span   int   // records of a partition past its watermark
	k      *commitBehind
	slab   messageSlab // what intake decodes into, owned by the intake loop

	mu        sync.Mutex
	keys      map[orderKey]*keyQueue
	free      []*keyQueue // emptied queues for reuse
	readyHead *keyQueue
	readyTail *keyQueue
	running   int // slots held
	idle      []*keyWorker
	returners []chan struct{} // workers back from a retry wait, wanting a slot
	wm        watermark
	// progress, when set, is closed at the next finished record: the
	// intake waits on it for a key's share or a partition's span.
	progress chan struct{}
	// avg is the moving average of how long a record takes to handle;
	// it starts high, so a consumer of slow handlers ramps up at once.
	avg      time.Duration
	fastCap  int           // workers that run at once while handlers are fast
	finished uint64        // records finished, for the stall watch
	watching bool          // a stall watch is armed
	wakeDue  bool          // ready keys wait for the intake to wake workers
	closing  bool          // no record starts any more
	quit     chan struct{} // closed when the idle workers are to exit
	wg       sync.WaitGroup
	// aheads counts the backlogs holding a read batch (keyBacklog.ahead):
	// at most n at once, so the memory of backlogs is bounded by the
	// handlers, however many keys are hot; the others read one record
	// at a time.
	aheads int
}

// runKeyed runs the PerConversation scheduler until stopped. A graceful
// stop stops intake and finishes the records already started (queued ones
// stay uncommitted for the partition's next owner); the watermark is
// committed at the end, even after a failure.
func (s *session) runKeyed(ctx context.Context) error {
	cfg := s.c.cfg
	ks := &keyedSet{
		s:       s,
		n:       cfg.Concurrency.Handlers,
		custom:  cfg.Concurrency.orderKey(),
		bound:   newQueueBound(cfg),
		fs:      newFailState(),
		share:   max(cfg.MaxQueuedRecords/keyShareDivisor, 1),
		shareB:  max(int64(cfg.MaxQueuedBytes)/keyShareDivisor, 1),
		span:    spanFactor * cfg.MaxQueuedRecords,
		k:       s.startCommitBehind(),
		keys:    make(map[orderKey]*keyQueue),
		wm:      newWatermark(),
		avg:     stallWait,
		fastCap: goruntime.GOMAXPROCS(0),
		quit:    make(chan struct{}),
	}
	s.flushHandled = ks.k.flush
	s.c.hooks.bound.Store(ks.bound)
	return s.supervise(ctx, func() error {
		loopErr := s.intake(true, ks.fs, ks.k, ks.take)
		ks.close()
		return s.drain(loopErr, func() {
			ks.wg.Wait()
			ks.settleBacklogs(s.workCtx)
		}, ks.k, ks.fs.failure)
	})
}

// take queues a polled batch: it decodes each record (the prefetcher does
// it ahead while intake is busy), finds its key and queues it; it fails
// once a record failed, and stops the intake once the consumer stops.
func (ks *keyedSet) take(next polled) error {
	ks.slab.reset(len(next.batch))
	defer ks.slab.reset(0)
	for i := range next.batch {
		j := keyJob{rec: next.batch[i]}
		if next.decoded != nil {
			j.decodedRecord = next.decoded[i]
		} else {
			j.decodedRecord = ks.s.c.decode(&ks.slab, &j.rec)
		}
		if !ks.admit(&j) {
			if err := ks.fs.failure(); err != nil {
				return err
			}
			return errIntakeStopped
		}
	}
	ks.wakeWorkers()
	return nil
}

// keyOf returns the unit of order of j.
func (ks *keyedSet) keyOf(j *keyJob) orderKey {
	if j.m != nil {
		if ks.custom != nil {
			if name := ks.customKey(j.m); name != "" {
				return orderKey{name: name, byName: true}
			}
		} else if c := j.m.Provenance.Conversation; !c.IsZero() {
			return orderKey{conv: c}
		}
	}
	return orderKey{partition: j.rec.Partition}
}

// customKey runs the user's key function; a panic orders the record by its
// partition rather than crash the consumer.
func (ks *keyedSet) customKey(m *Message) (name string) {
	defer func() {
		if r := recover(); r != nil {
			ks.s.c.log.Error("OrderKey panicked; ordering the record by its partition", "source", m.Position.String(), "panic", r)
			name = ""
		}
	}()
	return ks.custom(m)
}

// admit queues j behind its key, waiting for room in the global bound and
// in its partition's span; false once the consumer is stopping or failed.
// A record beyond its key's share is deferred instead: kept by position,
// charging nothing.
func (ks *keyedSet) admit(j *keyJob) bool {
	s := ks.s
	key := ks.keyOf(j)
	j.size = ks.bound.size(&j.rec)
	ks.mu.Lock()
	if ks.skipped(key, j) {
		ks.mu.Unlock()
		return true
	}
	var q *keyQueue
	for {
		if ks.closing {
			ks.mu.Unlock()
			return false
		}
		q = ks.keys[key]
		deferred := q != nil && (q.held >= ks.share || q.bytes > 0 && q.bytes+j.size > ks.shareB)
		if ks.wm.span(j.rec.Partition) < ks.span && (deferred || ks.bound.tryTake(j.size)) {
			if deferred {
				*j = keyJob{rec: Incoming{Position: j.rec.Position}, deferred: true}
			}
			break
		}
		// The bound is full, or the partition's oldest unfinished record
		// holds it: the ready keys must run, and intake waits for a
		// record to finish.
		if ks.wakeDue {
			ks.wakeLocked()
		}
		if ks.progress == nil {
			ks.progress = make(chan struct{})
		}
		progress := ks.progress
		ks.mu.Unlock()
		select {
		case <-progress:
		case <-ks.fs.wake:
		case <-s.stop:
		case <-s.workCtx.Done():
		}
		if s.stopping() || s.workCtx.Err() != nil {
			return false
		}
		ks.mu.Lock()
	}
	j.mark = ks.wm.take(j.rec.Position)
	if q == nil {
		q = ks.newQueue(key)
	}
	q.jobs = append(q.jobs, *j)
	if !j.deferred {
		q.held++
		q.bytes += j.size
	}
	if !q.scheduled {
		q.scheduled = true
		ks.dispatch(q)
	}
	ks.mu.Unlock()
	return true
}

// skipped reports whether intake leaves j to its key's backlog: the key
// has a backlog on j's partition, or is over its share and starts one
// there. Intake then moves on at once, whatever the key holds; mu held.
func (ks *keyedSet) skipped(key orderKey, j *keyJob) bool {
	q := ks.keys[key]
	if q == nil || ks.closing || ks.wm.rewinds(j.rec.Position) {
		return false
	}
	if b := q.backlog; b != nil {
		if b.pin.pm != ks.wm.current(j.rec.Partition) {
			return false // another partition's, or one read again since
		}
		ks.wm.see(j.rec.Position)
		return true
	}
	if q.held < ks.share && (q.bytes == 0 || q.bytes+j.size <= ks.shareB) {
		return false
	}
	pin := ks.wm.skip(j.rec.Position)
	q.backlog = &keyBacklog{pin: pin, at: j.rec.Offset}
	return true
}

// recycle keeps an emptied queue for reuse, unless the free list holds
// as many as there are slots or the queue grew long (a deferred backlog):
// an idle consumer keeps little; mu held.
func (ks *keyedSet) recycle(q *keyQueue) {
	if len(ks.free) >= ks.n || cap(q.jobs) > 64 {
		return
	}
	*q = keyQueue{jobs: q.jobs[:0]}
	ks.free = append(ks.free, q)
}

// newQueue returns an empty queue for key, registered; mu held.
func (ks *keyedSet) newQueue(key orderKey) *keyQueue {
	var q *keyQueue
	if n := len(ks.free); n > 0 {
		q = ks.free[n-1]
		ks.free = ks.free[:n-1]
	} else {
		q = &keyQueue{}
	}
	q.key = key
	ks.keys[key] = q
	return q
}

// dispatch hands a key that has a record to start to a worker when a slot
// is free (an idle worker, or a new one), else to the back of the ready
// list; mu held.
//
// While handlers are fast, a key waits in the ready list instead and the
// intake wakes workers (at most GOMAXPROCS) once per batch or before it
// waits: a wake per record would cost more than the handler.
func (ks *keyedSet) dispatch(q *keyQueue) {
	switch {
	case ks.running >= ks.n || len(ks.returners) > 0:
		ks.dispatchBack(q)
	case ks.avg < fastHandler:
		ks.dispatchBack(q)
		ks.wakeDue = true
	default:
		ks.running++
		ks.startOn(q)
	}
}

// wakeLocked starts workers for ready keys: up to GOMAXPROCS of them while
// handlers are fast (arming the stall watch when keys are left waiting),
// else up to n. mu held.
func (ks *keyedSet) wakeLocked() {
	ks.wakeDue = false
	limit := ks.n
	if ks.avg < fastHandler {
		limit = min(ks.n, ks.fastCap)
	}
	for ks.readyHead != nil && ks.running < limit && len(ks.returners) == 0 && !ks.closing {
		ks.running++
		ks.startOn(ks.popReady())
	}
	if ks.readyHead != nil && limit < ks.n {
		ks.watchLocked()
	}
}

// wakeWorkers is wakeLocked for the intake, when a batch is queued or before it
// waits for room.
func (ks *keyedSet) wakeWorkers() {
	ks.mu.Lock()
	if ks.wakeDue {
		ks.wakeLocked()
	}
	ks.mu.Unlock()
}

// watchLocked arms the stall watch: while handlers are fast, ready keys
// wait for the few running workers, which is cheaper than waking one
// worker per key; should no record finish within stallWait (the handlers
// turned slow, or are stuck) the watch starts workers for the ready keys
// up to n. mu held.
func (ks *keyedSet) watchLocked() {
	if ks.watching || ks.closing {
		return
	}
	ks.watching = true
	from := ks.finished
	// Real time, like commit pacing: the watch changes how soon a key
	// starts, never the order or the outcome of any record.
	time.AfterFunc(stallWait, func() {
		ks.mu.Lock()
		defer ks.mu.Unlock()
		ks.watching = false
		if ks.closing || ks.readyHead == nil {
			return
		}
		if ks.finished == from {
			ks.avg = stallWait // slow for now: let keys start on slots of their own
			for ks.readyHead != nil && ks.running < ks.n && len(ks.returners) == 0 {
				ks.running++
				ks.startOn(ks.popReady())
			}
			return
		}
		ks.watchLocked()
	})
}

// startOn gives q and a slot to an idle worker or a new one; mu held.
func (ks *keyedSet) startOn(q *keyQueue) {
	if n := len(ks.idle); n > 0 {
		w := ks.idle[n-1]
		ks.idle = ks.idle[:n-1]
		w.next <- q
		return
	}
	ks.wg.Add(1)
	go ks.work(q)
}

// popReady takes the key at the front of the ready list; mu held.
func (ks *keyedSet) popReady() *keyQueue {
	q := ks.readyHead
	if q != nil {
		ks.readyHead = q.next
		if ks.readyHead == nil {
			ks.readyTail = nil
		}
		q.next = nil
	}
	return q
}

// work is a worker: it handles the next record of its key, then takes the
// next ready key, or waits idle until handed one.
func (ks *keyedSet) work(q *keyQueue) {
	defer ks.wg.Done()
	w := &keyWorker{ks: ks, next: make(chan *keyQueue, 1)}
	// The worker's context carries it, so a retry wait can lend its slot
	// (see retryWait).
	ctx := context.WithValue(ks.s.workCtx, keyWorkerKey{}, w)
	if cs := ks.s.newClaimSet(ks.k); cs != nil {
		// Workers claim key by key (a record may wait long in its queue, past
		// a claim's lease); the keys are completed in batches.
		ctx = withClaims(ctx, cs)
	}
	// One job per worker, reused: the pipeline keeps a pointer to its
	// record, which would otherwise move every job to the heap.
	j := new(keyJob)
	for q != nil {
		ks.mu.Lock()
		// After a graceful stop no record starts, though intake may not
		// have noticed the stop yet.
		if ks.closing || ks.s.stopping() {
			ks.running--
			ks.mu.Unlock()
			return
		}
		fromBacklog := q.waiting() == 0
		if !fromBacklog {
			*j = q.pop()
		}
		ks.mu.Unlock()
		var err error
		began := time.Now()
		if fromBacklog {
			if err = ks.nextBacklogged(ctx, q, j); err == nil && !j.noop {
				_, err = ks.s.c.process(ctx, &j.rec, j.decodedRecord)
			}
		} else if !j.deferred {
			_, err = ks.s.c.process(ctx, &j.rec, j.decodedRecord)
		} else if err = ks.reread(ctx, j); err == nil && (j.m != nil || j.err != nil) {
			_, err = ks.s.c.process(ctx, &j.rec, j.decodedRecord)
		}
		var exit bool
		q, exit = ks.finish(w, q, j, err, time.Since(began))
		*j = keyJob{} // an idle worker keeps no message alive
		if exit {
			return
		}
		if q == nil {
			select {
			case q = <-w.next:
			case <-ks.quit:
				return
			}
		}
	}
}

// reread reads a deferred record from the log again and decodes it. A
// record the log no longer holds (it returned a later one: retention
// removed it meanwhile) is finished without being handled, since no member
// could handle it. An answer with no record proves nothing: it is read
// again after a wait, and at a stop it fails, leaving the record
// uncommitted.
func (ks *keyedSet) reread(ctx context.Context, j *keyJob) error {
	c := ks.s.c
	for {
		recs, err := c.t.ReadRange(ctx, c.cfg.Topic, j.rec.Partition, j.rec.Offset, 1)
		if err != nil {
			return fmt.Errorf("read deferred record %s again: %w", j.rec.Position.String(), err)
		}
		if len(recs) > 0 && recs[0].Offset > j.rec.Offset {
			c.log.Warn("a deferred record is no longer in the log; skipping it", "source", j.rec.Position.String())
			return nil
		}
		if len(recs) > 0 && recs[0].Offset == j.rec.Offset {
			j.rec = recs[0]
			j.decodedRecord = c.decode(nil, &j.rec)
			return nil
		}
		ks.mu.Lock()
		closing := ks.closing
		ks.mu.Unlock()
		if closing || ks.s.stopping() {
			return fmt.Errorf("read deferred record %s again: %w", j.rec.Position.String(), errEmptyRead)
		}
		if err := c.retryWait(ctx, c.cfg.PollInterval); err != nil {
			return err
		}
	}
}

// nextBacklogged sets j to the next record of q's key in its backlog, or
// marks it a noop once the backlog caught up with intake and ended (or its
// partition was handed back), or the scheduler closes (the pin then stays,
// holding the mark below what the backlog did not handle).
func (ks *keyedSet) nextBacklogged(ctx context.Context, q *keyQueue, j *keyJob) error {
	ks.mu.Lock()
	closing := ks.closing
	ks.mu.Unlock()
	for !closing {
		rec, ok, err := ks.scanBacklog(ctx, q)
		if errors.Is(err, errEmptyRead) {
			// Transient: wait, lending the slot, and read again.
			if err := ks.s.c.retryWait(ctx, ks.s.c.cfg.PollInterval); err != nil {
				return err
			}
			ks.mu.Lock()
			closing = ks.closing || ks.s.stopping()
			ks.mu.Unlock()
			continue
		}
		if err != nil || ok {
			*j = keyJob{rec: rec.rec, decodedRecord: rec.decodedRecord, backlogged: true}
			return err
		}
		break
	}
	*j = keyJob{backlogged: true, noop: true}
	return nil
}

// errEmptyRead is a read of records the log should hold that answered
// none: no proof retention removed them, so it is retried, never skipped.
var errEmptyRead = errors.New("the log answered no record")

// scanBacklog returns the next record of q's key in its backlog, read
// again from the log, passing over the records of other keys (intake took
// them) and moving the pin past them; ok is false once the backlog caught
// up with intake and ended, or its partition was read again from its
// stored offset (its marks commit nothing). The record returned stays the
// backlog's next (first in buf, at or past b.at) until finish moved b.at
// past it, so the pin holds below it and a record that failed is found
// again by the next scan.
func (ks *keyedSet) scanBacklog(ctx context.Context, q *keyQueue) (next keyJob, ok bool, err error) {
	c := ks.s.c
	b := q.backlog
	for {
		// The record returned last stays first in buf until finish moved
		// b.at past it: one that failed is read again by the next scan
		// (settleBacklogs at a stop), never passed over.
		for len(b.buf) > 0 && b.buf[0].Offset < b.at {
			b.buf = b.buf[1:]
		}
		ks.mu.Lock()
		pm := b.pin.pm
		// Checked on every record, not only once buf ran dry: after a
		// rebalance the records read ahead are replayed from the stored
		// offset by intake, so handling them here would break their order
		// and run them twice; once a commit was refused because the
		// partition moved to another member, they are that member's.
		if pm.detached || pm.lost.Load() || (len(b.buf) == 0 && b.at > pm.last) {
			ks.endBacklog(q)
			ks.mu.Unlock()
			return keyJob{}, false, nil
		}
		last := pm.last
		n := int(min(last-b.at+1, uint64(c.cfg.PollBatch)))
		if len(b.buf) == 0 {
			if b.ahead {
				b.ahead = false
				ks.aheads--
			}
			if n > 1 {
				if ks.aheads < ks.n {
					b.ahead = true
					ks.aheads++
				} else {
					n = 1
				}
			}
		}
		ks.mu.Unlock()
		if len(b.buf) == 0 {
			recs, err := c.t.ReadRange(ctx, c.cfg.Topic, pm.partition, b.at, n)
			if err != nil {
				return keyJob{}, false, fmt.Errorf("read the backlog of a hot key from %d:%d again: %w", pm.partition, b.at, err)
			}
			for len(recs) > 0 && recs[0].Offset < b.at {
				recs = recs[1:]
			}
			if len(recs) == 0 {
				// No record at all proves nothing was removed: only those
				// below a record the log returned are gone.
				return keyJob{}, false, fmt.Errorf("read the backlog of a hot key from %d:%d again: %w", pm.partition, b.at, errEmptyRead)
			}
			if recs[0].Offset > last {
				// Retention removed them meanwhile: no member can handle them.
				c.log.Warn("a hot key's backlog is no longer in the log; skipping it", "partition", pm.partition, "from", b.at, "to", last)
				ks.moveBacklog(b, last+1)
				continue
			}
			for i := range recs {
				if recs[i].Offset > last {
					recs = recs[:i]
					break
				}
			}
			b.buf = recs
		}
		next = keyJob{rec: b.buf[0]}
		next.decodedRecord = c.decode(nil, &next.rec)
		if ks.keyOf(&next) == q.key {
			return next, true, nil
		}
		b.buf = b.buf[1:]
		ks.moveBacklog(b, next.rec.Offset+1)
	}
}

// settleBacklogs, once no worker runs any more, passes every backlog over
// the records up to its key's next unhandled one, so the watermark a
// graceful stop commits is not held below records that were handled
// (those of other keys after the key's last handled record). Nothing is
// handled; a read that fails leaves the pin where it is.
func (ks *keyedSet) settleBacklogs(ctx context.Context) {
	ks.mu.Lock()
	var backlogged []*keyQueue
	for _, q := range ks.keys {
		if q.backlog != nil {
			backlogged = append(backlogged, q)
		}
	}
	ks.mu.Unlock()
	for _, q := range backlogged {
		// A record found is unhandled: it stays first in buf and the pin
		// stays at it.
		_, _, err := ks.scanBacklog(ctx, q)
		if err != nil {
			ks.s.c.log.Debug("cannot settle a hot key's backlog at the stop; its handled records past the watermark are redelivered", "error", err)
		}
	}
}

// moveBacklog moves b's pin up to at, marking the partition's mark when it
// moved.
func (ks *keyedSet) moveBacklog(b *keyBacklog, at uint64) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	b.at = max(b.at, at)
	if p, moved := ks.wm.movePin(b.pin, b.at); moved {
		ks.k.markFrom(p, b.pin.pm)
	}
}

// endBacklog drops q's backlog, what it read ahead and its pin; mu held.
func (ks *keyedSet) endBacklog(q *keyQueue) {
	if q.backlog.ahead {
		ks.aheads--
	}
	q.backlog.buf = nil
	if p, moved := ks.wm.unpin(q.backlog.pin); moved {
		ks.k.markFrom(p, q.backlog.pin.pm)
	}
	q.backlog = nil
}

// finish records j's result and returns the key this worker handles next
// (nil: it went idle), or exit once the scheduler is closing.
func (ks *keyedSet) finish(w *keyWorker, q *keyQueue, j *keyJob, err error, took time.Duration) (next *keyQueue, exit bool) {
	kick := false
	ks.mu.Lock()
	ks.finished++
	ks.avg += (took - ks.avg) / 8
	q.bytes -= j.size
	if !j.deferred && !j.backlogged {
		ks.bound.give(1, j.size)
	}
	switch {
	case err != nil:
		ks.failLocked(err)
	case j.noop:
	case j.backlogged:
		q.backlog.at = max(q.backlog.at, j.rec.Offset+1)
		if p, moved := ks.wm.movePin(q.backlog.pin, q.backlog.at); moved {
			ks.k.markFrom(p, q.backlog.pin.pm)
			kick = true
		}
	default:
		if p, moved := ks.wm.finish(j.mark); moved {
			ks.k.markFrom(p, j.mark.pm)
			kick = true
		}
	}
	if ks.progress != nil {
		close(ks.progress)
		ks.progress = nil
	}
	switch {
	case ks.closing:
	case q.pending():
		// Its turn is over: the key goes behind the others that wait.
		ks.dispatchBack(q)
	default:
		q.scheduled = false
		if q.bytes == 0 {
			delete(ks.keys, q.key)
			ks.recycle(q)
		}
	}
	switch {
	case ks.closing:
		ks.running--
		exit = true
	case len(ks.returners) > 0:
		ks.handSlot()
		ks.idle = append(ks.idle, w)
	default:
		if next = ks.popReady(); next == nil {
			ks.running--
			ks.idle = append(ks.idle, w)
		}
	}
	ks.mu.Unlock()
	if kick {
		// A failed commit surfaces in the intake loop, which watches the
		// committer.
		_ = ks.k.kick()
	}
	return next, exit
}

// dispatchBack puts a scheduled key with more records at the back of the
// ready list; mu held.
func (ks *keyedSet) dispatchBack(q *keyQueue) {
	q.next = nil
	if ks.readyTail == nil {
		ks.readyHead = q
	} else {
		ks.readyTail.next = q
	}
	ks.readyTail = q
}

// handSlot gives a freed slot to the first worker back from a retry wait;
// mu held, len(returners) > 0.
func (ks *keyedSet) handSlot() {
	ch := ks.returners[0]
	ks.returners = slices.Delete(ks.returners, 0, 1)
	close(ch)
}

// keyWorkerKey is the context key of the worker a record runs on.
type keyWorkerKey struct{}

// lendSlot frees the slot of a worker entering a retry wait, so the
// backoff of one key holds no other: the slot goes to a worker back from
// its own wait, or to the next ready key.
func (ks *keyedSet) lendSlot() {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	switch {
	case len(ks.returners) > 0:
		ks.handSlot()
	case !ks.closing && ks.readyHead != nil:
		ks.startOn(ks.popReady())
	default:
		ks.running--
	}
}

// retakeSlot waits for a slot after a retry wait; workers back from their
// wait go before keys that wait to start. A hard stop takes the slot at
// once: the handler returns without running again.
func (ks *keyedSet) retakeSlot(ctx context.Context) {
	ks.mu.Lock()
	if ks.running < ks.n && len(ks.returners) == 0 {
		ks.running++
		ks.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	ks.returners = append(ks.returners, ch)
	ks.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		ks.mu.Lock()
		if i := slices.Index(ks.returners, ch); i >= 0 {
			ks.returners = slices.Delete(ks.returners, i, i+1)
			ks.running++
		}
		ks.mu.Unlock()
	}
}

// retryWait waits d (on the consumer's clock) before a handler's next
// attempt; a PerConversation worker lends its slot meanwhile.
func (c *Consumer) retryWait(ctx context.Context, d time.Duration) error {
	if w, ok := ctx.Value(keyWorkerKey{}).(*keyWorker); ok {
		w.ks.lendSlot()
		defer w.ks.retakeSlot(ctx)
	}
	return sleep(ctx, c.clock, d)
}

// failLocked records the first failure: no record starts any more, and
// the queued ones stay uncommitted; mu held.
func (ks *keyedSet) failLocked(err error) {
	if ks.fs.fail(err) {
		ks.closeLocked()
	}
}

// close stops every record from starting: queued ones give back their
// bound and stay uncommitted; running ones finish.
func (ks *keyedSet) close() {
	ks.mu.Lock()
	ks.closeLocked()
	ks.mu.Unlock()
}

func (ks *keyedSet) closeLocked() {
	if ks.closing {
		return
	}
	ks.closing = true
	for _, q := range ks.keys {
		for q.waiting() > 0 {
			if j := q.pop(); !j.deferred {
				q.bytes -= j.size
				ks.bound.give(1, j.size)
			}
		}
	}
	ks.readyHead, ks.readyTail = nil, nil
	if ks.progress != nil {
		close(ks.progress)
		ks.progress = nil
	}
	close(ks.quit)
}
