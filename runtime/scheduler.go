package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	goruntime "runtime"
)

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

// keyJob is one record waiting for, or being handled by, its key's worker.
type keyJob struct {
	// rec points into the polled batch (or what a reread returned): the
	// pipeline and observers keep pointers to it.
	rec *Incoming
	decodedRecord
	// decoded is set once decodedRecord holds rec decoded (intake decodes
	// only for a key that reads the message; a worker decodes the rest).
	decoded bool
	size    int64
	mark    markTicket
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
	// scheduler.aheads.
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
	// inline is set for a key beyond the lane cap: intake handles its
	// records itself as it takes them, and they never wait in jobs.
	inline bool
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

// keyWorker is a goroutine that handles keys, one turn of a key at a time.
type keyWorker struct {
	sc   *scheduler
	next chan *keyQueue // a key handed to this idle worker, with its slot
}

// scheduler is the consumer's one scheduler, whatever its Concurrency:
// the intake loop queues each record behind its key (scheduleKey), and at
// most n workers at a time (those holding a slot) handle one turn of a key
// each: its next record, or (a key with turn 0, the partition) all it has
// queued. A worker that finished a turn moves its key to the back of the
// ready list when more records wait, so keys take turns. Up to lanes keys
// hold a worker lane at once (lanes < 0: every key does), an idle key
// giving its lane up to one that needs it; the records of a key without
// one are handled inline, by intake on the poller's goroutine, through the
// same record loop. All of it is guarded by mu.
type scheduler struct {
	s      *session
	n      int
	key    *scheduleKey
	lanes  int // keys that get a worker lane; < 0: all of them
	laned  int // keys that got one
	bound  *queueBound
	fs     *failState
	share  int   // records one key may hold
	shareB int64 // bytes one key may hold
	span   int   // records of a partition past its watermark
	k      *commitBehind
	slab   messageSlab // what intake decodes into, owned by the intake loop
	keyBuf []orderKey  // the keys of the batch intake takes, reused
	// inline and inlineTurn handle, on the intake goroutine, the records
	// of the keys beyond the lane cap; owned by the intake loop.
	inline     *recordLoop
	inlineTurn turn

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

// schedule runs the consumer's scheduler until stopped. A graceful stop
// stops intake and finishes the records already started (queued ones stay
// uncommitted for the partition's next owner); the watermark is committed
// at the end, even after a failure.
func (s *session) schedule(ctx context.Context) error {
	cfg := s.c.cfg
	sc := &scheduler{
		s:       s,
		n:       cfg.Concurrency.handlers(),
		key:     cfg.Concurrency.scheduleKey(),
		lanes:   cfg.Concurrency.lanes(),
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
	s.flushHandled = sc.k.flush
	s.c.hooks.bound.Store(sc.bound)
	s.c.hooks.sched.Store(sc)
	return s.supervise(ctx, func() error {
		// With no lane at all (Serial) intake handles every record: the
		// prefetcher decodes the next batch meanwhile.
		loopErr := s.intake(sc.key.message || sc.lanes == 0, sc.fs, sc.k, sc.take)
		sc.close()
		return s.drain(loopErr, func() {
			sc.wg.Wait()
			sc.settleBacklogs(s.workCtx)
		}, sc.k, sc.fs.failure)
	})
}

// takeHold is how many records intake queues under one hold of the lock:
// a lock per record would cost a fast handler's workers as much as their
// handling, a hold per batch would keep them waiting for the whole batch.
const takeHold = 64

// take queues a polled batch: it finds each record's key (decoding the
// record first only when the key reads the message; the prefetcher does
// it ahead while intake is busy) and queues it; it fails once a record
// failed, and stops the intake once the consumer stops.
func (sc *scheduler) take(next polled) error {
	batch := next.batch
	decoded := next.decoded
	if sc.key.message && decoded == nil {
		sc.slab.reset(len(batch))
		defer sc.slab.reset(0)
		decoded = make([]decodedRecord, len(batch))
		for i := range batch {
			decoded[i] = sc.s.c.decode(&sc.slab, &batch[i])
		}
	}
	// Keys first, outside the lock: OrderedBy's function is the user's.
	keys := sc.keyBuf[:0]
	for i := range batch {
		if sc.key.headers && i > 0 && sameKeyInput(&batch[i-1], &batch[i]) {
			// A conversation's records mostly carry the same header
			// bytes: a compare, not a parse.
			keys = append(keys, keys[i-1])
			continue
		}
		var m *Message
		if decoded != nil {
			m = decoded[i].m
		}
		keys = append(keys, sc.keyOf(&batch[i], m))
	}
	sc.keyBuf = keys
	defer clear(keys) // a custom key's name stays no longer than its batch
	sc.mu.Lock()
	// skipping is set while the record before was left to its key's
	// backlog under this hold of the lock: nothing skipped() reads can
	// have changed since but the partition's loss, so a next record of
	// the same key and partition is left too, with no lookup of its key.
	skipping := false
	for i := 0; i < len(batch); i++ {
		if i%takeHold == takeHold-1 {
			sc.mu.Unlock()
			sc.mu.Lock()
			skipping = false
		}
		if skipping && keys[i] == keys[i-1] && batch[i].Partition == batch[i-1].Partition && !sc.wm.rewinds(batch[i].Position) {
			sc.wm.see(batch[i].Position)
			continue
		}
		skipping = false
		if q := sc.queueOf(keys[i]); q != nil && q.inline {
			// Beyond the lane cap: intake handles the run of the key's
			// records that starts here itself, before it takes the next.
			end := i + 1
			for end < len(batch) && keys[end] == keys[i] {
				end++
			}
			if err := sc.takeInline(q, batch[i:end], decoded, i); err != nil {
				return err
			}
			i = end - 1
			continue
		}
		j := keyJob{rec: &batch[i], size: sc.bound.size(&batch[i])}
		if decoded != nil {
			j.decodedRecord, j.decoded = decoded[i], true
		}
		if sc.skipped(keys[i], &j) {
			skipping = true
			continue
		}
		if !sc.admitLocked(keys[i], &j) {
			sc.mu.Unlock()
			return sc.stopped()
		}
	}
	if sc.wakeDue {
		sc.wakeLocked()
	}
	sc.mu.Unlock()
	return nil
}

// queueOf returns key's queue. Under a lane cap it registers the queue of
// a key first seen, and gives a key without a lane one while the cap
// allows, taking it from an idle key if need be; a key still without one
// is handled inline. Without a cap (lanes < 0) it may return nil. mu held.
func (sc *scheduler) queueOf(key orderKey) *keyQueue {
	q := sc.keys[key]
	if sc.lanes < 0 || q != nil && !q.inline {
		return q
	}
	if sc.lanes > 0 && sc.laned == sc.lanes {
		sc.freeLane()
	}
	if q == nil {
		q = sc.newQueue(key)
		q.inline = true
	}
	// Moving an inline key onto a lane keeps its order: its inline run
	// finished before intake went on.
	if sc.laned < sc.lanes {
		q.inline = false
		sc.laned++
	}
	return q
}

// freeLane gives up the lane of a key with nothing queued or running (a
// partition idle for now, or revoked by a rebalance), so a key beyond the
// cap is not handled inline, blocking intake for every partition, while a
// lane sits unused; mu held. Its next record takes a lane again, or runs
// inline: with nothing of it in flight, either keeps its order.
func (sc *scheduler) freeLane() {
	for key, q := range sc.keys {
		if !q.inline && !q.scheduled && !q.pending() && q.bytes == 0 {
			delete(sc.keys, key)
			sc.recycle(q)
			sc.laned--
			return
		}
	}
}

// takeInline handles run, consecutive records of q's key (beyond the lane
// cap) from index at of the batch on (decoded, when not nil, is the
// batch's decoding), on the intake goroutine, as one turn: it finishes each record as it
// returns, so the watermark commits it. It charges no bound: its records
// are handled as they are taken, never held. It returns the failure that
// ended the turn, or errIntakeStopped once the consumer stops; mu held,
// and held again when it returns nil.
func (sc *scheduler) takeInline(q *keyQueue, run []Incoming, decoded []decodedRecord, at int) error {
	if sc.closing {
		sc.mu.Unlock()
		return sc.stopped()
	}
	t := &sc.inlineTurn
	for i := range run {
		j := keyJob{rec: &run[i], mark: sc.wm.take(run[i].Position)}
		if decoded != nil {
			j.decodedRecord, j.decoded = decoded[at+i], true
		}
		t.jobs = append(t.jobs, j)
	}
	if sc.wakeDue {
		// The lanes' keys queued so far start now, not after the run.
		sc.wakeLocked()
	}
	sc.mu.Unlock()
	if sc.inline == nil {
		sc.inline = sc.s.newRecordLoop(sc.s.workCtx, sc.k)
	}
	sc.runTurn(sc.inline, q, t)
	handled := t.handled
	t.reset()
	// Intake goes on to other keys, or waits for the next poll: the run's
	// messages are not kept alive for it.
	sc.inline.idle()
	if handled < len(run) || sc.s.stopping() {
		return sc.stopped()
	}
	sc.mu.Lock()
	return nil
}

// stopped is what take returns once it stopped short: the first failure,
// or errIntakeStopped.
func (sc *scheduler) stopped() error {
	if err := sc.fs.failure(); err != nil {
		return err
	}
	return errIntakeStopped
}

// keyOf returns the unit of order of rec (m: rec decoded, for a key that
// reads the message); a key function that panics orders the record by its
// partition rather than crash the consumer.
func (sc *scheduler) keyOf(rec *Incoming, m *Message) (key orderKey) {
	defer func() {
		if r := recover(); r != nil {
			sc.s.c.log.Error("the order key panicked; ordering the record by its partition", "source", rec.Position.String(), "panic", r)
			key = orderKey{partition: rec.Partition}
		}
	}()
	return sc.key.of(rec, m)
}

// overShare reports whether q holds its key's share already, so a record
// of size bytes goes to the log instead of the queue; mu held.
func (sc *scheduler) overShare(q *keyQueue, size int64) bool {
	return sc.key.fair && q != nil && (q.held >= sc.share || q.bytes > 0 && q.bytes+size > sc.shareB)
}

// admitLocked queues j behind key, waiting for room in the global bound
// and in its partition's span; false once the consumer is stopping or
// failed. A record beyond its key's share is deferred instead: kept by
// position, charging nothing. The caller asked skipped first. mu held,
// and held again when it returns.
func (sc *scheduler) admitLocked(key orderKey, j *keyJob) bool {
	s := sc.s
	var q *keyQueue
	for {
		if sc.closing {
			return false
		}
		q = sc.keys[key]
		deferred := sc.overShare(q, j.size)
		if sc.wm.span(j.rec.Partition) < sc.span && (deferred || sc.bound.tryTake(j.size)) {
			if deferred {
				*j = keyJob{rec: &Incoming{Position: j.rec.Position}, deferred: true}
			}
			break
		}
		// The bound is full, or the partition's oldest unfinished record
		// holds it: the ready keys must run, and intake waits for a
		// record to finish.
		if sc.wakeDue {
			sc.wakeLocked()
		}
		if sc.progress == nil {
			sc.progress = make(chan struct{})
		}
		progress := sc.progress
		sc.mu.Unlock()
		select {
		case <-progress:
		case <-sc.fs.wake:
		case <-s.stop:
		case <-s.workCtx.Done():
		}
		sc.mu.Lock()
		if s.stopping() || s.workCtx.Err() != nil {
			return false
		}
	}
	j.mark = sc.wm.take(j.rec.Position)
	if q == nil {
		q = sc.newQueue(key)
	}
	q.jobs = append(q.jobs, *j)
	if !j.deferred {
		q.held++
		q.bytes += j.size
	}
	if !q.scheduled {
		q.scheduled = true
		sc.dispatch(q)
	}
	return true
}

// skipped reports whether intake leaves j to its key's backlog: the key
// has a backlog on j's partition, or is over its share and starts one
// there. Intake then moves on at once, whatever the key holds; mu held.
func (sc *scheduler) skipped(key orderKey, j *keyJob) bool {
	q := sc.keys[key]
	if q == nil || sc.closing || sc.wm.rewinds(j.rec.Position) {
		return false
	}
	if b := q.backlog; b != nil {
		if b.pin.pm != sc.wm.current(j.rec.Partition) {
			return false // another partition's, or one read again since
		}
		sc.wm.see(j.rec.Position)
		return true
	}
	if !sc.overShare(q, j.size) {
		return false
	}
	pin := sc.wm.skip(j.rec.Position)
	q.backlog = &keyBacklog{pin: pin, at: j.rec.Offset}
	return true
}

// recycle keeps an emptied queue for reuse, unless the free list holds
// as many as there are slots or the queue grew long (a deferred backlog):
// an idle consumer keeps little; mu held.
func (sc *scheduler) recycle(q *keyQueue) {
	if len(sc.free) >= sc.n || cap(q.jobs) > 64 {
		return
	}
	*q = keyQueue{jobs: q.jobs[:0]}
	sc.free = append(sc.free, q)
}

// newQueue returns an empty queue for key, registered; mu held.
func (sc *scheduler) newQueue(key orderKey) *keyQueue {
	var q *keyQueue
	if n := len(sc.free); n > 0 {
		q = sc.free[n-1]
		sc.free = sc.free[:n-1]
	} else {
		q = &keyQueue{}
	}
	q.key = key
	sc.keys[key] = q
	return q
}

// dispatch hands a key that has a record to start to a worker when a slot
// is free (an idle worker, or a new one), else to the back of the ready
// list; mu held.
//
// While handlers are fast, a key waits in the ready list instead and the
// intake wakes workers (at most GOMAXPROCS) once per batch or before it
// waits: a wake per record would cost more than the handler.
func (sc *scheduler) dispatch(q *keyQueue) {
	switch {
	case sc.running >= sc.n || len(sc.returners) > 0:
		sc.dispatchBack(q)
	case sc.avg < fastHandler:
		sc.dispatchBack(q)
		sc.wakeDue = true
	default:
		sc.running++
		sc.startOn(q)
	}
}

// wakeLocked starts workers for ready keys: up to GOMAXPROCS of them while
// handlers are fast (arming the stall watch when keys are left waiting),
// else up to n. mu held.
func (sc *scheduler) wakeLocked() {
	sc.wakeDue = false
	limit := sc.n
	if sc.avg < fastHandler {
		limit = min(sc.n, sc.fastCap)
	}
	for sc.readyHead != nil && sc.running < limit && len(sc.returners) == 0 && !sc.closing {
		sc.running++
		sc.startOn(sc.popReady())
	}
	if sc.readyHead != nil && limit < sc.n {
		sc.watchLocked()
	}
}

// watchLocked arms the stall watch: while handlers are fast, ready keys
// wait for the few running workers, which is cheaper than waking one
// worker per key; should no record finish within stallWait (the handlers
// turned slow, or are stuck) the watch starts workers for the ready keys
// up to n. mu held.
func (sc *scheduler) watchLocked() {
	if sc.watching || sc.closing {
		return
	}
	sc.watching = true
	from := sc.finished
	// Real time, like commit pacing: the watch changes how soon a key
	// starts, never the order or the outcome of any record.
	time.AfterFunc(stallWait, func() {
		sc.mu.Lock()
		defer sc.mu.Unlock()
		sc.watching = false
		if sc.closing || sc.readyHead == nil {
			return
		}
		if sc.finished == from {
			sc.avg = stallWait // slow for now: let keys start on slots of their own
			for sc.readyHead != nil && sc.running < sc.n && len(sc.returners) == 0 {
				sc.running++
				sc.startOn(sc.popReady())
			}
			return
		}
		sc.watchLocked()
	})
}

// startOn gives q and a slot to an idle worker or a new one; mu held.
func (sc *scheduler) startOn(q *keyQueue) {
	if n := len(sc.idle); n > 0 {
		w := sc.idle[n-1]
		sc.idle = sc.idle[:n-1]
		w.next <- q
		return
	}
	sc.wg.Add(1)
	go sc.work(q)
}

// popReady takes the key at the front of the ready list; mu held.
func (sc *scheduler) popReady() *keyQueue {
	q := sc.readyHead
	if q != nil {
		sc.readyHead = q.next
		if sc.readyHead == nil {
			sc.readyTail = nil
		}
		q.next = nil
	}
	return q
}

// turn is what a worker takes of its key at once: the key's next queued
// records, up to the key's turn and never past a deferred one (taken
// alone), or none (its next record is in its backlog). A worker reuses
// its turn: the pipeline keeps a pointer to each record, which would
// otherwise move every record to the heap.
type turn struct {
	jobs []keyJob
	recs []*Incoming
	pre  []decodedRecord
	// ahead is how many records of the key wait behind the turn: what
	// the worker's slab may allocate for besides the turn's (a guess
	// past them would allocate messages no record uses).
	ahead int
	// took is how long the turn's handled records took, for the moving
	// average of a record's handling time.
	took    time.Duration
	handled int
}

// reset drops the turn's records, so an idle worker keeps no message alive.
func (t *turn) reset() {
	clear(t.jobs)
	clear(t.recs)
	clear(t.pre)
	t.jobs, t.recs, t.pre = t.jobs[:0], t.recs[:0], t.pre[:0]
	t.took, t.handled = 0, 0
}

// work is a worker: it handles a turn of its key, then takes the next
// ready key, or waits idle until handed one.
func (sc *scheduler) work(q *keyQueue) {
	defer sc.wg.Done()
	w := &keyWorker{sc: sc, next: make(chan *keyQueue, 1)}
	// The worker's context carries it, so a retry wait can lend its slot
	// (see retryWait).
	loop := sc.s.newRecordLoop(context.WithValue(sc.s.workCtx, keyWorkerKey{}, w), sc.k)
	t := new(turn)
	for q != nil {
		sc.mu.Lock()
		// After a graceful stop no record starts, though intake may not
		// have noticed the stop yet.
		if sc.closing || sc.s.stopping() {
			sc.releaseSlotLocked()
			sc.mu.Unlock()
			return
		}
		sc.popTurn(q, t)
		sc.mu.Unlock()
		sc.runTurn(loop, q, t)
		took, handled := t.took, t.handled
		t.reset()
		var exit bool
		if q, exit = sc.next(w, q, took, handled); exit {
			return
		}
		if q == nil {
			loop.idle()
			select {
			case q = <-w.next:
			case <-sc.quit:
				return
			}
		}
	}
}

// popTurn takes q's next turn of records into t; mu held.
func (sc *scheduler) popTurn(q *keyQueue, t *turn) {
	defer func() {
		t.ahead = q.waiting()
		if q.backlog != nil {
			// A hot key's next records are mostly among those its backlog
			// read ahead: a slab sized for one record would allocate a
			// message per record of the backlog.
			t.ahead += len(q.backlog.buf)
		}
	}()
	if q.waiting() == 0 {
		return // the key's next record is in its backlog
	}
	if sc.key.turn == 0 {
		// All of it (a partition key defers nothing): the queue's jobs
		// become the turn's, and the turn's emptied ones the queue's.
		t.jobs, q.jobs = q.jobs[q.head:], t.jobs[:0]
		q.head, q.held = 0, 0
		return
	}
	t.jobs = append(t.jobs, q.pop())
	if t.jobs[0].deferred {
		return
	}
	for q.waiting() > 0 && (sc.key.turn == 0 || len(t.jobs) < sc.key.turn) && !q.jobs[q.head].deferred {
		t.jobs = append(t.jobs, q.pop())
	}
}

// runTurn handles the records of t in order through loop, finishing each
// as it returns; a record of the key's backlog, or a deferred one, is read
// from the log again first. The turn ends at the first failure, or when
// the scheduler closes or the consumer stops: its records not started stay
// unfinished, and uncommitted.
func (sc *scheduler) runTurn(loop *recordLoop, q *keyQueue, t *turn) {
	if len(t.jobs) == 0 {
		t.jobs = append(t.jobs, keyJob{})
		if err := sc.nextBacklogged(loop.ctx, q, &t.jobs[0]); err != nil || t.jobs[0].noop {
			sc.finishRecord(q, &t.jobs[0], err)
			return
		}
	} else if j := &t.jobs[0]; j.deferred {
		if err := sc.reread(loop.ctx, j); err != nil || j.m == nil && j.err == nil {
			// Failed, or no longer in the log: finished unhandled.
			sc.finishRecord(q, j, err)
			return
		}
	}
	for i := range t.jobs {
		t.recs = append(t.recs, t.jobs[i].rec)
		if t.jobs[i].decoded {
			t.pre = append(t.pre, t.jobs[i].decodedRecord)
		}
	}
	pre := t.pre
	if len(pre) != len(t.recs) {
		pre = nil // decoded by the loop as each record's turn comes
	}
	began := time.Now()
	n, _ := loop.run(t.recs, pre, t.ahead, func(i int, err error) bool {
		closing := sc.finishRecord(q, &t.jobs[i], err)
		return err == nil && !closing && !sc.s.stopping()
	})
	t.took, t.handled = time.Since(began), n
	if n < len(t.jobs) {
		sc.unstarted(q, t.jobs[n:])
	}
}

// reread reads a deferred record from the log again and decodes it. A
// record the log no longer holds (it returned a later one: retention
// removed it meanwhile) is finished without being handled, since no member
// could handle it. An answer with no record proves nothing: it is read
// again after a wait, and at a stop it fails, leaving the record
// uncommitted.
func (sc *scheduler) reread(ctx context.Context, j *keyJob) error {
	c := sc.s.c
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
			j.rec = &recs[0]
			j.decodedRecord, j.decoded = c.decode(nil, j.rec), true
			return nil
		}
		sc.mu.Lock()
		closing := sc.closing
		sc.mu.Unlock()
		if closing || sc.s.stopping() {
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
func (sc *scheduler) nextBacklogged(ctx context.Context, q *keyQueue, j *keyJob) error {
	sc.mu.Lock()
	closing := sc.closing
	sc.mu.Unlock()
	for !closing {
		rec, ok, err := sc.scanBacklog(ctx, q)
		if errors.Is(err, errEmptyRead) {
			// Transient: wait, lending the slot, and read again.
			if err := sc.s.c.retryWait(ctx, sc.s.c.cfg.PollInterval); err != nil {
				return err
			}
			sc.mu.Lock()
			closing = sc.closing || sc.s.stopping()
			sc.mu.Unlock()
			continue
		}
		if err != nil || ok {
			*j = keyJob{rec: rec.rec, decodedRecord: rec.decodedRecord, decoded: rec.decoded, backlogged: true}
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
func (sc *scheduler) scanBacklog(ctx context.Context, q *keyQueue) (next keyJob, ok bool, err error) {
	c := sc.s.c
	b := q.backlog
	for {
		// The record returned last stays first in buf until finish moved
		// b.at past it: one that failed is read again by the next scan
		// (settleBacklogs at a stop), never passed over.
		for len(b.buf) > 0 && b.buf[0].Offset < b.at {
			b.buf = b.buf[1:]
		}
		sc.mu.Lock()
		pm := b.pin.pm
		// Checked on every record, not only once buf ran dry: after a
		// rebalance the records read ahead are replayed from the stored
		// offset by intake, so handling them here would break their order
		// and run them twice; once a commit was refused because the
		// partition moved to another member, they are that member's.
		if pm.detached || pm.lost.Load() || (len(b.buf) == 0 && b.at > pm.last) {
			sc.endBacklog(q)
			sc.mu.Unlock()
			return keyJob{}, false, nil
		}
		last := pm.last
		n := int(min(last-b.at+1, uint64(c.cfg.PollBatch)))
		if len(b.buf) == 0 {
			if b.ahead {
				b.ahead = false
				sc.aheads--
			}
			if n > 1 {
				if sc.aheads < sc.n {
					b.ahead = true
					sc.aheads++
				} else {
					n = 1
				}
			}
		}
		sc.mu.Unlock()
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
				sc.moveBacklog(b, last+1)
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
		next = keyJob{rec: &b.buf[0]}
		if sc.key.message {
			next.decodedRecord, next.decoded = c.decode(nil, next.rec), true
		}
		if sc.keyOf(next.rec, next.m) == q.key {
			return next, true, nil
		}
		b.buf = b.buf[1:]
		sc.moveBacklog(b, next.rec.Offset+1)
	}
}

// settleBacklogs, once no worker runs any more, passes every backlog over
// the records up to its key's next unhandled one, so the watermark a
// graceful stop commits is not held below records that were handled
// (those of other keys after the key's last handled record). Nothing is
// handled; a read that fails leaves the pin where it is.
func (sc *scheduler) settleBacklogs(ctx context.Context) {
	sc.mu.Lock()
	var backlogged []*keyQueue
	for _, q := range sc.keys {
		if q.backlog != nil {
			backlogged = append(backlogged, q)
		}
	}
	sc.mu.Unlock()
	for _, q := range backlogged {
		// A record found is unhandled: it stays first in buf and the pin
		// stays at it.
		_, _, err := sc.scanBacklog(ctx, q)
		if err != nil {
			sc.s.c.log.Debug("cannot settle a hot key's backlog at the stop; its handled records past the watermark are redelivered", "error", err)
		}
	}
}

// moveBacklog moves b's pin up to at, marking the partition's mark when it
// moved.
func (sc *scheduler) moveBacklog(b *keyBacklog, at uint64) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	b.at = max(b.at, at)
	if p, moved := sc.wm.movePin(b.pin, b.at); moved {
		sc.k.markFrom(p, b.pin.pm)
	}
}

// endBacklog drops q's backlog, what it read ahead and its pin; mu held.
func (sc *scheduler) endBacklog(q *keyQueue) {
	if q.backlog.ahead {
		sc.aheads--
	}
	q.backlog.buf = nil
	if p, moved := sc.wm.unpin(q.backlog.pin); moved {
		sc.k.markFrom(p, q.backlog.pin.pm)
	}
	q.backlog = nil
}

// finishRecord records the result of j, a record of q's key, and reports
// whether the scheduler is closing.
func (sc *scheduler) finishRecord(q *keyQueue, j *keyJob, err error) (closing bool) {
	kick := false
	sc.mu.Lock()
	sc.finished++
	q.bytes -= j.size
	if !j.deferred && !j.backlogged && !q.inline {
		sc.bound.give(j.size)
	}
	switch {
	case err != nil:
		sc.failLocked(err)
	case j.noop:
	case j.backlogged:
		q.backlog.at = max(q.backlog.at, j.rec.Offset+1)
		if p, moved := sc.wm.movePin(q.backlog.pin, q.backlog.at); moved {
			sc.k.markFrom(p, q.backlog.pin.pm)
			kick = true
		}
	default:
		if p, moved := sc.wm.finish(j.mark); moved {
			sc.k.markFrom(p, j.mark.pm)
			kick = true
		}
	}
	if sc.progress != nil {
		close(sc.progress)
		sc.progress = nil
	}
	closing = sc.closing
	sc.mu.Unlock()
	if kick {
		// A failed commit surfaces in the intake loop, which watches the
		// committer.
		_ = sc.k.kick()
	}
	return closing
}

// unstarted gives back what the records of a turn that were not started
// charge; they stay unfinished, holding their partition's mark below them.
func (sc *scheduler) unstarted(q *keyQueue, jobs []keyJob) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for i := range jobs {
		if j := &jobs[i]; !j.deferred && !j.backlogged && !q.inline {
			q.bytes -= j.size
			sc.bound.give(j.size)
		}
	}
}

// next ends the turn of q's key on worker w, in which handled records
// took took, and returns the key w handles next (nil: it went idle), or
// exit once the scheduler is closing.
func (sc *scheduler) next(w *keyWorker, q *keyQueue, took time.Duration, handled int) (next *keyQueue, exit bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if handled > 0 {
		sc.avg += (took/time.Duration(handled) - sc.avg) / 8
	}
	switch {
	case sc.closing:
	case q.pending():
		// Its turn is over: the key goes behind the others that wait.
		sc.dispatchBack(q)
	default:
		q.scheduled = false
		if q.bytes == 0 && sc.key.fair {
			// A partition's queue stays (there are no more of them than
			// partitions): it is emptied after every turn, and would
			// otherwise be grown anew for the next.
			delete(sc.keys, q.key)
			sc.recycle(q)
		}
	}
	switch {
	case sc.closing:
		sc.releaseSlotLocked()
		exit = true
	case len(sc.returners) > 0:
		sc.handSlot()
		sc.idle = append(sc.idle, w)
	default:
		if next = sc.popReady(); next == nil {
			sc.running--
			sc.idle = append(sc.idle, w)
		}
	}
	return next, exit
}

// dispatchBack puts a scheduled key with more records at the back of the
// ready list; mu held.
func (sc *scheduler) dispatchBack(q *keyQueue) {
	q.next = nil
	if sc.readyTail == nil {
		sc.readyHead = q
	} else {
		sc.readyTail.next = q
	}
	sc.readyTail = q
}

// handSlot gives a freed slot to the first worker back from a retry wait;
// mu held, len(returners) > 0.
func (sc *scheduler) handSlot() {
	ch := sc.returners[0]
	sc.returners = slices.Delete(sc.returners, 0, 1)
	close(ch)
}

// releaseSlotLocked gives up a worker's slot, to a worker back from its
// retry wait first; mu held.
func (sc *scheduler) releaseSlotLocked() {
	if len(sc.returners) > 0 {
		sc.handSlot()
		return
	}
	sc.running--
}

// keyWorkerKey is the context key of the worker a record runs on.
type keyWorkerKey struct{}

// lendSlot frees the slot of a worker entering a retry wait, so the
// backoff of one key holds no other: the slot goes to a worker back from
// its own wait, or to the next ready key.
func (sc *scheduler) lendSlot() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	switch {
	case len(sc.returners) > 0:
		sc.handSlot()
	case !sc.closing && sc.readyHead != nil:
		sc.startOn(sc.popReady())
	default:
		sc.running--
	}
}

// retakeSlot waits for a slot after a retry wait; workers back from their
// wait go before keys that wait to start. A hard stop takes the slot at
// once: the handler returns without running again.
func (sc *scheduler) retakeSlot(ctx context.Context) {
	sc.mu.Lock()
	if sc.running < sc.n && len(sc.returners) == 0 {
		sc.running++
		sc.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	sc.returners = append(sc.returners, ch)
	sc.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		sc.mu.Lock()
		if i := slices.Index(sc.returners, ch); i >= 0 {
			sc.returners = slices.Delete(sc.returners, i, i+1)
			sc.running++
		}
		sc.mu.Unlock()
	}
}

// retryWait waits d (on the consumer's clock) before a handler's next
// attempt; a PerConversation worker lends its slot meanwhile.
func (c *Consumer) retryWait(ctx context.Context, d time.Duration) error {
	if w, ok := ctx.Value(keyWorkerKey{}).(*keyWorker); ok {
		w.sc.lendSlot()
		defer w.sc.retakeSlot(ctx)
	}
	return sleep(ctx, c.clock, d)
}

// failLocked records the first failure: no record starts any more, and
// the queued ones stay uncommitted; mu held.
func (sc *scheduler) failLocked(err error) {
	if sc.fs.fail(err) {
		sc.closeLocked()
	}
}

// close stops every record from starting: queued ones give back their
// bound and stay uncommitted; running ones finish.
func (sc *scheduler) close() {
	sc.mu.Lock()
	sc.closeLocked()
	sc.mu.Unlock()
}

func (sc *scheduler) closeLocked() {
	if sc.closing {
		return
	}
	sc.closing = true
	for _, q := range sc.keys {
		for q.waiting() > 0 {
			if j := q.pop(); !j.deferred {
				q.bytes -= j.size
				sc.bound.give(j.size)
			}
		}
	}
	sc.readyHead, sc.readyTail = nil, nil
	if sc.progress != nil {
		close(sc.progress)
		sc.progress = nil
	}
	close(sc.quit)
}
