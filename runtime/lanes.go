package runtime

import (
	"context"
	"errors"
	"sync"
)

// laneSet is the per-partition scheduler's shared state: the lanes, the
// global queue bound, the committer lanes mark handled offsets with, and
// the first lane failure. Lanes never block on the intake loop, so a lane
// can finish while intake waits for queue capacity.
type laneSet struct {
	s       *session
	records *weighted
	bytes   *weighted
	maxB    int64
	k       *commitBehind

	lanes map[uint32]chan queued // owned by the intake loop
	wg    sync.WaitGroup

	mu     sync.Mutex
	failed error         // first lane failure
	wake   chan struct{} // closed at the first lane failure
}

// queued is a run of one partition's records waiting in its lane, in
// order, holding their share of the bound.
type queued struct {
	recs []Incoming
}

// runLanes takes polled batches on this goroutine and hands each
// partition's records to its own lane, in order; at most Lanes lanes exist
// and records of further partitions are handled inline. Handled offsets are
// committed behind the lanes, after each run a lane finishes and at least
// once a second within one.
func (s *session) runLanes(ctx context.Context) error {
	cfg := s.c.cfg
	ls := &laneSet{
		s:       s,
		records: newWeighted(int64(cfg.MaxQueuedRecords)),
		bytes:   newWeighted(int64(cfg.MaxQueuedBytes)),
		maxB:    int64(cfg.MaxQueuedBytes),
		k:       s.startCommitBehind(),
		lanes:   make(map[uint32]chan queued),
		wake:    make(chan struct{}),
	}
	s.flushHandled = ls.k.flush
	s.c.hooks.lanes.Store(ls)
	return s.supervise(ctx, func() error {
		loopErr := ls.poll()
		// Closing the lanes lets each finish its queue and exit.
		for _, ch := range ls.lanes {
			close(ch)
		}
		return s.drain(loopErr, &ls.wg, ls.k, ls.failure)
	})
}

// drain waits for the handlers of wg to end and commits what was handled,
// even after a failure; a graceful stop is bounded by the supervisor's
// grace, and a failure (loopErr) gets the same bound here, after which
// handlers are cancelled and what is left stays uncommitted. The lanes and
// the PerConversation scheduler end this way.
func (s *session) drain(loopErr error, wg *sync.WaitGroup, k *commitBehind, failure func() error) error {
	if loopErr != nil {
		drained := make(chan struct{})
		go func() {
			select {
			case <-s.c.clock.After(s.c.cfg.ShutdownGrace):
				s.cancelWork()
			case <-drained:
			}
		}()
		wg.Wait()
		close(drained)
	} else {
		wg.Wait()
	}
	errs := []error{loopErr}
	for _, err := range []error{k.flush(), failure()} {
		if err != nil && !errors.Is(loopErr, err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// poll is the intake loop; it returns when stopped, on a failure, or when a
// lane failed.
func (ls *laneSet) poll() error {
	s := ls.s
	pf := s.startPrefetch(false)
	defer pf.close()
	var overflow messageSlab // for records handled here, over the lane cap
	octx, ocs := s.workCtx, s.newClaimSet(ls.k)
	var odecoded []decodedRecord
	if ocs != nil {
		octx = withClaims(octx, ocs)
	}
	for {
		if err := ls.failure(); err != nil {
			return err
		}
		next, ok := pf.nextOrWake(ls.wake, ls.k.failed)
		if !ok {
			return nil
		}
		if next.err != nil {
			return next.err
		}
		if err := ls.k.kick(); err != nil {
			return err
		}
		batch := next.batch
		for len(batch) > 0 {
			// A run of consecutive records of one partition goes to its lane
			// in as few handoffs as the bound allows.
			p := batch[0].Partition
			n := 1
			for n < len(batch) && batch[n].Partition == p {
				n++
			}
			run := batch[:n:n]
			batch = batch[n:]
			lane, ok := ls.lanes[p]
			if !ok && len(ls.lanes) >= s.c.cfg.Concurrency.Lanes {
				// Over the lane cap: handle it here rather than drop it or
				// spawn lanes without bound.
				overflow.reset(len(run))
				var decoded []decodedRecord
				if ocs != nil {
					odecoded = decodeAll(s.c, &overflow, run, nil, odecoded)
					decoded = odecoded
					if err := ocs.claim(octx, decoded); err != nil {
						return err
					}
				}
				for i := range run {
					var err error
					if decoded != nil {
						_, err = s.c.processDecoded(octx, &run[i], decoded[i].m, decoded[i].err)
					} else {
						_, err = s.c.process(octx, &overflow, &run[i])
					}
					if err != nil {
						ocs.release(octx)
						return err
					}
					ls.k.mark(run[i].Position)
				}
				ocs.release(octx)
				clear(odecoded)
				overflow.reset(0)
				if err := ls.k.kick(); err != nil {
					return err
				}
				continue
			}
			if !ok {
				lane = ls.start(p)
			}
			for len(run) > 0 {
				// Take the chunk's share of the global bound; a full bound
				// stalls intake for every partition until lanes catch up.
				k, size := ls.chunk(run)
				if !ls.records.acquire(int64(k), s.stop, s.workCtx.Done()) {
					return nil
				}
				if !ls.bytes.acquire(size, s.stop, s.workCtx.Done()) {
					ls.records.release(int64(k))
					return nil
				}
				lane <- queued{recs: run[:k:k]}
				run = run[k:]
				if err := ls.failure(); err != nil {
					return err
				}
			}
		}
	}
}

// size is what a record charges the bytes bound: never 0, never more than
// the whole bound.
func (ls *laneSet) size(rec *Incoming) int64 { return min(max(int64(rec.Size()), 1), ls.maxB) }

// chunk returns how many leading records of run fit the global bound in
// one handoff (at least one), and their bytes.
func (ls *laneSet) chunk(run []Incoming) (n int, bytes int64) {
	maxRecords := ls.s.c.cfg.MaxQueuedRecords
	for n < len(run) && n < maxRecords {
		b := ls.size(&run[n])
		if n > 0 && bytes+b > ls.maxB {
			break
		}
		bytes += b
		n++
	}
	return n, bytes
}

// start creates the lane of a partition. Its channel holds as many runs as
// the global bound admits records, so a send after acquiring never blocks.
func (ls *laneSet) start(partition uint32) chan queued {
	ch := make(chan queued, ls.s.c.cfg.MaxQueuedRecords)
	ls.lanes[partition] = ch
	ls.wg.Add(1)
	go func() {
		defer ls.wg.Done()
		clock := ls.s.c.clock
		lastKick := clock.Now()
		var slab messageSlab
		ctx, cs := ls.s.workCtx, ls.s.newClaimSet(ls.k)
		var decoded []decodedRecord
		if cs != nil {
			ctx = withClaims(ctx, cs)
		}
		for q := range ch {
			slab.reset(len(q.recs))
			var claimErr error
			if cs != nil {
				// Decode the run first, to claim its keys in one call.
				decoded = decodeAll(ls.s.c, &slab, q.recs, nil, decoded)
				claimErr = cs.claim(ctx, decoded)
			}
			for i := range q.recs {
				rec := &q.recs[i]
				err := claimErr
				if err == nil && cs != nil {
					_, err = ls.s.c.processDecoded(ctx, rec, decoded[i].m, decoded[i].err)
				} else if err == nil {
					_, err = ls.s.c.process(ctx, &slab, rec)
				}
				ls.records.release(1)
				ls.bytes.release(ls.size(rec))
				ls.report(rec.Position, err)
				// Slow handlers do not hold their predecessors' commits
				// back for longer than a second.
				if err == nil && i < len(q.recs)-1 && clock.Now().Sub(lastKick) >= serialCommitEvery {
					_ = ls.k.kick()
					lastKick = clock.Now()
				}
				if err != nil {
					// The rest of this lane's queue stays unhandled and
					// uncommitted.
					cs.release(ctx)
					ls.releaseAll(q.recs[i+1:])
					for rest := range ch {
						ls.releaseAll(rest.recs)
					}
					return
				}
			}
			cs.release(ctx)
			clear(decoded)
			slab.reset(0)
			// A failed commit surfaces in the intake loop, which watches
			// the committer.
			_ = ls.k.kick()
			lastKick = clock.Now()
		}
	}()
	return ch
}

// releaseAll gives back the bound held by records that will not be handled.
func (ls *laneSet) releaseAll(recs []Incoming) {
	for i := range recs {
		ls.records.release(1)
		ls.bytes.release(ls.size(&recs[i]))
	}
}

// report records a lane's result for one record: a handled offset is
// marked for commit, the first failure stops intake.
func (ls *laneSet) report(p Position, err error) {
	if err == nil {
		ls.k.mark(p)
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.failed == nil {
		ls.failed = err
		close(ls.wake)
	}
}

func (ls *laneSet) failure() error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.failed
}
