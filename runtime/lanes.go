package runtime

import (
	"context"
	"errors"
	"sync"
)

// laneSet is the per-partition scheduler's shared state: the lanes, the
// global queue bound, and the offsets lanes finished and the poller has yet
// to commit. Lanes report through a map rather than a channel so a lane
// never blocks on the poller while the poller waits for queue capacity.
type laneSet struct {
	s       *session
	records *weighted
	bytes   *weighted
	maxB    int64

	lanes map[uint32]chan queued // owned by the poller
	wg    sync.WaitGroup

	mu     sync.Mutex
	done   map[uint32]uint64 // latest handled offset per partition, uncommitted
	failed error             // first lane failure
	wake   chan struct{}     // signalled (capacity 1) when done or failed changes
}

// queued is one record waiting in a lane, holding its share of the bound.
type queued struct {
	rec   Incoming
	bytes int64
}

// runLanes polls on this goroutine and hands each partition's records to
// its own lane, in order; at most Lanes lanes exist and records of further
// partitions are handled inline. Offsets are committed by the poller as
// lanes report them.
func (s *session) runLanes(ctx context.Context) error {
	cfg := s.c.cfg
	ls := &laneSet{
		s:       s,
		records: newWeighted(int64(cfg.MaxQueuedRecords)),
		bytes:   newWeighted(int64(cfg.MaxQueuedBytes)),
		maxB:    int64(cfg.MaxQueuedBytes),
		lanes:   make(map[uint32]chan queued),
		done:    make(map[uint32]uint64),
		wake:    make(chan struct{}, 1),
	}
	return s.supervise(ctx, func() error {
		loopErr := ls.poll()
		// Drain: closing the lanes lets each finish its queue and exit. A
		// graceful stop is bounded by the supervisor's grace; a failure
		// gets the same bound here, after which handlers are cancelled and
		// what is left stays uncommitted.
		for _, ch := range ls.lanes {
			close(ch)
		}
		if loopErr != nil {
			drained := make(chan struct{})
			go func() {
				select {
				case <-s.c.clock.After(s.c.cfg.ShutdownGrace):
					s.cancelWork()
				case <-drained:
				}
			}()
			ls.wg.Wait()
			close(drained)
		} else {
			ls.wg.Wait()
		}
		return errors.Join(loopErr, ls.commit())
	})
}

// poll is the intake loop; it returns when stopped, on a failure, or when a
// lane failed.
func (ls *laneSet) poll() error {
	s := ls.s
	pf := s.startPrefetch()
	defer pf.close()
	for {
		if err := ls.commit(); err != nil {
			return err
		}
		next, ok := pf.nextOrWake(ls.wake)
		if !ok {
			return nil
		}
		if next.err != nil {
			return next.err
		}
		batch := next.batch
		for i := range batch {
			rec := batch[i]
			lane, ok := ls.lanes[rec.Partition]
			if !ok && len(ls.lanes) >= s.c.cfg.Concurrency.Lanes {
				// Over the lane cap: handle it here rather than drop it or
				// spawn lanes without bound.
				if _, err := s.c.process(s.workCtx, &rec); err != nil {
					return err
				}
				if err := s.commit(rec.Partition, rec.Offset); err != nil {
					return err
				}
				continue
			}
			if !ok {
				lane = ls.start(rec.Partition)
			}
			// Take the record's share of the global bound; a full bound
			// stalls intake for every partition until lanes catch up.
			size := min(max(int64(rec.Size()), 1), ls.maxB)
			if !ls.records.acquire(1, s.stop, s.workCtx.Done()) {
				return nil
			}
			if !ls.bytes.acquire(size, s.stop, s.workCtx.Done()) {
				ls.records.release(1)
				return nil
			}
			lane <- queued{rec: rec, bytes: size}
			if err := ls.failure(); err != nil {
				return err
			}
		}
	}
}

// start creates the lane of a partition. Its channel holds as many records
// as the global bound admits, so a send after acquiring never blocks.
func (ls *laneSet) start(partition uint32) chan queued {
	ch := make(chan queued, ls.s.c.cfg.MaxQueuedRecords)
	ls.lanes[partition] = ch
	ls.wg.Add(1)
	go func() {
		defer ls.wg.Done()
		for q := range ch {
			_, err := ls.s.c.process(ls.s.workCtx, &q.rec)
			ls.records.release(1)
			ls.bytes.release(q.bytes)
			ls.report(q.rec.Position, err)
			if err != nil {
				// The rest of this lane's queue stays unhandled and uncommitted.
				for rest := range ch {
					ls.records.release(1)
					ls.bytes.release(rest.bytes)
				}
				return
			}
		}
	}()
	return ch
}

func (ls *laneSet) report(p Position, err error) {
	ls.mu.Lock()
	if err != nil {
		if ls.failed == nil {
			ls.failed = err
		}
	} else {
		ls.done[p.Partition] = p.Offset
	}
	ls.mu.Unlock()
	select {
	case ls.wake <- struct{}{}:
	default:
	}
}

func (ls *laneSet) failure() error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.failed
}

// commit stores every offset the lanes finished since the last call, then
// surfaces the first lane failure, so handled work is committed even when
// another lane failed.
func (ls *laneSet) commit() error {
	ls.mu.Lock()
	var done map[uint32]uint64
	if len(ls.done) > 0 {
		done, ls.done = ls.done, make(map[uint32]uint64)
	}
	failed := ls.failed
	ls.mu.Unlock()
	for partition, offset := range done {
		if err := ls.s.commit(partition, offset); err != nil {
			return err
		}
	}
	return failed
}
