package runtime

import "sync"

// weighted is a counting semaphore whose acquisitions can be abandoned; the
// lane scheduler uses two of them (records and bytes) as its global queue
// bound, and a stop signal must be able to interrupt a stalled intake.
type weighted struct {
	mu    sync.Mutex
	limit int64
	avail int64
	wake  chan struct{} // closed and replaced whenever capacity is released
}

func newWeighted(n int64) *weighted { return &weighted{limit: n, avail: n} }

// acquire takes n units, waiting until they are free; it gives up and
// returns false as soon as any of cancel is closed.
func (s *weighted) acquire(n int64, cancel ...<-chan struct{}) bool {
	for {
		s.mu.Lock()
		if s.avail >= n {
			s.avail -= n
			s.mu.Unlock()
			return true
		}
		if s.wake == nil {
			s.wake = make(chan struct{})
		}
		wake := s.wake
		s.mu.Unlock()
		if !waitAny(wake, cancel) {
			return false
		}
	}
}

// release returns n units and wakes every waiter.
func (s *weighted) release(n int64) {
	s.mu.Lock()
	s.avail += n
	if s.wake != nil {
		close(s.wake)
		s.wake = nil
	}
	s.mu.Unlock()
}

// waitAny waits for wake and reports true, or for any cancel channel and
// reports false. Up to two cancel channels are supported, which is all the
// scheduler needs (the stop signal and the hard-stop context).
func waitAny(wake <-chan struct{}, cancel []<-chan struct{}) bool {
	var c0, c1 <-chan struct{}
	if len(cancel) > 0 {
		c0 = cancel[0]
	}
	if len(cancel) > 1 {
		c1 = cancel[1]
	}
	select {
	case <-wake:
		return true
	case <-c0:
		return false
	case <-c1:
		return false
	}
}

// used returns how many units are taken.
func (s *weighted) used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limit - s.avail
}

// tryAcquire takes n units when they are free now, without waiting.
func (s *weighted) tryAcquire(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.avail < n {
		return false
	}
	s.avail -= n
	return true
}
