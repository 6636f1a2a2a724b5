package runtime

import (
	"context"
	"sync"
)

// laneSet is the per-partition scheduler's shared state: the lanes, the
// global queue bound, the committer lanes mark handled offsets with, and
// the first lane failure. Lanes never block on the intake loop, so a lane
// can finish while intake waits for queue capacity.
type laneSet struct {
	s     *session
	bound *queueBound
	k     *commitBehind
	fs    *failState

	lanes map[uint32]chan queued // owned by the intake loop
	wg    sync.WaitGroup
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
	ls := &laneSet{
		s:     s,
		bound: newQueueBound(s.c.cfg),
		k:     s.startCommitBehind(),
		fs:    newFailState(),
		lanes: make(map[uint32]chan queued),
	}
	s.flushHandled = ls.k.flush
	s.c.hooks.bound.Store(ls.bound)
	return s.supervise(ctx, func() error {
		overflow := s.newRecordLoop(ls.k) // for records handled inline, over the lane cap
		loopErr := s.intake(false, ls.fs, ls.k, func(next polled) error { return ls.take(next.batch, overflow) })
		// Closing the lanes lets each finish its queue and exit.
		for _, ch := range ls.lanes {
			close(ch)
		}
		return s.drain(loopErr, ls.wg.Wait, ls.k, ls.fs.failure)
	})
}

// take hands a polled batch to the lanes, a run of consecutive records of
// one partition at a time, in as few handoffs as the bound allows; records
// of a partition over the lane cap are handled here by overflow.
func (ls *laneSet) take(batch []Incoming, overflow *recordLoop) error {
	s := ls.s
	for len(batch) > 0 {
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
			if _, err := overflow.run(run, nil, func(i int, err error) bool {
				if err == nil {
					ls.k.mark(run[i].Position)
				}
				return err == nil
			}); err != nil {
				return err
			}
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
			k, size := ls.bound.chunk(run)
			if !ls.bound.take(k, size, s.stop, s.workCtx.Done()) {
				return errIntakeStopped
			}
			lane <- queued{recs: run[:k:k]}
			run = run[k:]
			if err := ls.fs.failure(); err != nil {
				return err
			}
		}
	}
	return nil
}

// start creates the lane of a partition. Its channel holds as many runs as
// the global bound admits records, so a send after taking never blocks.
func (ls *laneSet) start(partition uint32) chan queued {
	ch := make(chan queued, ls.bound.maxRecords)
	ls.lanes[partition] = ch
	ls.wg.Add(1)
	go func() {
		defer ls.wg.Done()
		clock := ls.s.c.clock
		lastKick := clock.Now()
		loop := ls.s.newRecordLoop(ls.k)
		for q := range ch {
			n, err := loop.run(q.recs, nil, func(i int, err error) bool {
				rec := &q.recs[i]
				ls.bound.give(1, ls.bound.size(rec))
				ls.report(rec.Position, err)
				// Slow handlers do not hold their predecessors' commits
				// back for longer than a second.
				if err == nil && i < len(q.recs)-1 && clock.Now().Sub(lastKick) >= commitEvery {
					_ = ls.k.kick()
					lastKick = clock.Now()
				}
				return err == nil
			})
			if err != nil {
				// The rest of this lane's queue stays unhandled and
				// uncommitted.
				ls.bound.giveAll(q.recs[n:])
				for rest := range ch {
					ls.bound.giveAll(rest.recs)
				}
				return
			}
			// A failed commit surfaces in the intake loop, which watches
			// the committer.
			_ = ls.k.kick()
			lastKick = clock.Now()
		}
	}()
	return ch
}

// report records a lane's result for one record: a handled offset is
// marked for commit, the first failure stops intake.
func (ls *laneSet) report(p Position, err error) {
	if err == nil {
		ls.k.mark(p)
		return
	}
	ls.fs.fail(err)
}
