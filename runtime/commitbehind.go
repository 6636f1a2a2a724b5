package runtime

import (
	"errors"
	"sync"
	"time"
)

// commitBehind stores handled offsets on a goroutine of its own, so the
// handling loop does not wait for a commit's round trip between batches.
// It commits only offsets the loop marked handled (coalesced per partition:
// the latest one wins), at most one round per CommitInterval, and a final
// flush, synchronous, stores whatever is left before the member leaves its
// group. A failed commit stops the
// background goroutine and is reported by the next kick or flush, and at
// once through failed; the final flush still tries what is left.
type commitBehind struct {
	s *session
	// keys completes the idempotency keys of handled records under a
	// BatchDeduplicator (nil otherwise); a round commits only once the
	// keys handled before it are completed.
	keys *keyCompleter

	mu      sync.Mutex
	pending map[uint32]markedAt // marked, not yet committed
	spare   map[uint32]markedAt // the previous round's map, empty, for reuse
	err     error

	kickc    chan struct{} // capacity 1: a commit is wanted
	failed   chan struct{} // closed when a commit failed
	quit     chan struct{}
	quitOnce sync.Once // flush runs from the loop and, on a cut-off, the supervisor
	done     chan struct{}
}

func (s *session) startCommitBehind() *commitBehind {
	k := &commitBehind{
		s: s, pending: make(map[uint32]markedAt), spare: make(map[uint32]markedAt),
		kickc: make(chan struct{}, 1), failed: make(chan struct{}),
		quit: make(chan struct{}), done: make(chan struct{}),
	}
	if s.c.batch != nil {
		k.keys = s.startKeyCompleter()
	}
	go k.run()
	return k
}

// markedAt is a marked offset and the watermark partition that reported
// it, told when its commit is refused
// because the partition moved to another member.
type markedAt struct {
	offset uint64
	from   *partitionMarks
}

// markFrom records p, a mark pm reported, as handled; nothing is
// committed until kick or flush.
func (k *commitBehind) markFrom(p Position, pm *partitionMarks) {
	k.mu.Lock()
	k.pending[p.Partition] = markedAt{offset: p.Offset, from: pm}
	k.mu.Unlock()
}

// kick asks for the marked offsets to be committed in the background and
// returns the failure of an earlier commit, if any.
func (k *commitBehind) kick() error {
	select {
	case k.kickc <- struct{}{}:
	default:
	}
	// A kick follows every handled record: it reads the failure only once
	// there is one, without the lock.
	select {
	case <-k.failed:
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.err
	default:
		return nil
	}
}

// flush stops the background goroutine and commits what is left on the
// caller's goroutine; it returns the first commit failure.
func (k *commitBehind) flush() error {
	k.quitOnce.Do(func() { close(k.quit) })
	<-k.done
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys != nil {
		// Keys first: an offset is stored only once the keys of the records
		// below it are completed, never while they are claims.
		if err := k.keys.close(); err != nil {
			if k.err == nil {
				k.err = err
			}
			return k.err
		}
	}
	// After a failed round, still try once more to store what was handled:
	// the consumer stops with the first failure either way, but whatever
	// this stores is not redelivered.
	if err := k.commitAll(k.pending); k.err == nil {
		k.err = err
	}
	return k.err
}

func (k *commitBehind) run() {
	defer close(k.done)
	// Rounds are paced in real time, like idle polling: pacing changes how
	// much a crash redelivers, never whether a handled offset is committed.
	var last time.Time
	for {
		select {
		case <-k.kickc:
		case <-k.quit:
			return
		}
		if wait := k.s.c.cfg.CommitInterval - time.Since(last); wait > 0 {
			// Marks made meanwhile join this round; a quit leaves them to
			// the final flush.
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-k.quit:
				t.Stop()
				return
			}
		}
		// Swap the maps so mark goes on while this round commits.
		k.mu.Lock()
		round := k.pending
		k.pending, k.spare = k.spare, k.pending
		k.mu.Unlock()
		if len(round) == 0 {
			// A kick whose marks an earlier round took: nothing to store,
			// and no reason to hold the next real round back.
			continue
		}
		last = time.Now()
		err := k.keysCompleted()
		if err == nil {
			err = k.commitAll(round)
		}
		if err != nil {
			k.mu.Lock()
			// What this round did not store goes back to pending (a newer
			// mark of the same partition wins), for the final flush.
			for p, off := range round {
				if _, newer := k.pending[p]; !newer {
					k.pending[p] = off
				}
				delete(round, p)
			}
			k.err = err
			k.mu.Unlock()
			close(k.failed)
			return
		}
	}
}

// keysCompleted waits until the idempotency keys of the records marked
// so far are completed (at once without a BatchDeduplicator), within the
// bound of a commit.
func (k *commitBehind) keysCompleted() error {
	if k.keys == nil {
		return nil
	}
	ctx, cancel := k.s.commitCtx()
	defer cancel()
	return k.keys.wait(ctx, k.keys.target())
}

// commitAll commits and removes every offset of m, stopping at the first
// failure. It runs under the session's commitCtx, so what was handled before
// a hard stop or an expired grace is still committed, within its own bound.
func (k *commitBehind) commitAll(m map[uint32]markedAt) error {
	if len(m) == 0 {
		return nil
	}
	ctx, cancel := k.s.commitCtx()
	defer cancel()
	for partition, at := range m {
		err := k.s.commit(ctx, partition, at.offset)
		if errors.Is(err, ErrPartitionLost) {
			// Its new owner starts from the stored offset: the marks
			// that reported this one commit nothing more, and its
			// backlogs end (see partitionMarks.lost).
			if at.from != nil {
				at.from.lost.Store(true)
			}
			err = nil
		}
		if err != nil {
			return err
		}
		delete(m, partition)
	}
	return nil
}
