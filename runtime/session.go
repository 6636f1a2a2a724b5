package runtime

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// finalCommitBound bounds the commit of handled records once the session
// was cut off (a hard stop, an expired grace), when the work context no
// longer allows it.
const finalCommitBound = 5 * time.Second

// loopExitWait is how long a session that gives up waits for its loop to
// notice the cancellation before it returns and leaves the membership to
// the loop's end.
const loopExitWait = time.Second

// session is one Run of a consumer: its membership, the stop signal and the
// context that handlers run under (cancelled on a hard stop or when the
// shutdown grace runs out).
type session struct {
	c          *Consumer
	sub        Subscription
	stop       <-chan struct{}
	workCtx    context.Context
	cancelWork context.CancelFunc
	pollErrors int

	// flushHandled commits what the scheduler handled and has not yet
	// committed; the supervisor calls it when it gives up on the loop.
	flushHandled func() error

	mu        sync.Mutex
	loopEnded bool // the loop returned
	abandoned bool // the supervisor returned first; the loop closes the membership
}

// stopping reports whether a graceful stop was requested.
func (s *session) stopping() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// poll fetches the next batch under the poll-error policy: a lost connection
// stops at once; other failures back off 50 ms doubling to 1 s and stop after
// ten in a row.
func (s *session) poll() ([]Incoming, error) {
	// A hard stop does not cancel a poll in flight: on a transport whose
	// connection holds the group membership (Iggy), cutting a call off
	// abandons the connection and with it the membership, which must stay
	// while a handler that ignores its cancellation still runs. Polls do
	// not wait for data, so the call ends within the transport's own call
	// timeout; no poll starts after the stop.
	batch, err := s.sub.Poll(context.WithoutCancel(s.workCtx), s.c.cfg.PollBatch)
	if err == nil {
		s.pollErrors = 0
		return batch, nil
	}
	if s.workCtx.Err() != nil {
		return nil, s.workCtx.Err()
	}
	if errors.Is(err, ErrDisconnected) {
		return nil, fmt.Errorf("poll: %w", err)
	}
	s.pollErrors++
	if s.pollErrors >= maxPollErrors {
		return nil, fmt.Errorf("poll failed %d times in a row: %w", s.pollErrors, err)
	}
	s.c.log.Warn("poll failed, backing off", "attempt", s.pollErrors, "error", err)
	s.wait(pollBackoff(s.pollErrors), nil)
	return nil, nil
}

// wait sleeps for d of real time (idle polling is not part of any semantic
// a test pins, so it does not use the injected clock) or until stop, the
// hard stop or wake fires.
func (s *session) wait(d time.Duration, wake <-chan struct{}) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.stop:
	case <-s.workCtx.Done():
	case <-wake:
	}
}

// commitCtx is what commits run under. It is not the work context: a hard
// stop or an expired grace must not cut off a commit in flight (that would
// lose the commit of records already handled, and on Iggy the connection
// and the membership with it). Commits may go on for finalCommitBound after
// the work context ends, so records handled before a hard stop or an
// expired grace (or by a handler that finished after it) are still
// committed, and no longer.
func (s *session) commitCtx() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(s.workCtx))
	stop := context.AfterFunc(s.workCtx, func() { time.AfterFunc(finalCommitBound, cancel) })
	return ctx, func() {
		stop()
		cancel()
	}
}

// commit stores a handled offset. A transient failure (a connection being
// rebuilt) is retried on the poll backoff, ten times at most; a partition
// that moved to another member is returned matching ErrPartitionLost, for
// the caller to go on without it; anything else stops the consumer,
// leaving the record to be redelivered.
func (s *session) commit(ctx context.Context, partition uint32, offset uint64) error {
	for attempt := 1; ; attempt++ {
		err := s.sub.Commit(ctx, partition, offset)
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrPartitionLost) {
			// Its new owner starts from the stored offset and sees these
			// records again: at-least-once, nothing lost. The caller
			// hears it (it ends the partition's backlogs) and goes on.
			s.c.log.Info("partition moved to another member; its uncommitted records will be handled there", "partition", partition, "offset", offset)
			return fmt.Errorf("commit %d:%d: %w", partition, offset, err)
		}
		if !errors.Is(err, ErrTransient) || errors.Is(err, ErrDisconnected) || attempt >= maxPollErrors || ctx.Err() != nil {
			return fmt.Errorf("commit %d:%d: %w", partition, offset, err)
		}
		s.c.log.Warn("commit failed, retrying", "partition", partition, "offset", offset, "attempt", attempt, "error", err)
		if err := backoff(ctx, attempt); err != nil {
			return fmt.Errorf("commit %d:%d: %w", partition, offset, err)
		}
	}
}

// finish ends a session whose loop has returned: leave the group after a
// clean drain, otherwise just drop the membership.
func (s *session) finish(ctx context.Context, loopErr error) error {
	if loopErr != nil || ctx.Err() != nil {
		_ = s.sub.Close()
		if loopErr == nil {
			loopErr = ctx.Err()
		}
		return loopErr
	}
	if err := s.sub.Leave(ctx); err != nil {
		// Everything handled is committed; dropping the membership instead
		// only delays the rebalance until the transport notices.
		s.c.log.Warn("leaving the consumer group failed; dropping the membership", "error", err)
		_ = s.sub.Close()
	}
	return nil
}

// supervise runs loop in the background and applies the stop semantics
// around it: a graceful stop waits for the loop within the grace, a hard
// stop returns at once (see giveUp).
func (s *session) supervise(ctx context.Context, loop func() error) error {
	done := make(chan error, 1)
	go func() {
		err := loop()
		s.mu.Lock()
		s.loopEnded = true
		abandoned := s.abandoned
		s.mu.Unlock()
		if abandoned {
			// The supervisor gave up while a handler still ran: the
			// membership was kept until now, so no other member could take
			// the partition and handle the same record at the same time.
			_ = s.sub.Close()
		}
		s.c.running.Store(false)
		done <- err
	}()
	stop := s.stop
	var grace <-chan time.Time // armed by the stop signal
	for {
		select {
		case err := <-done:
			return s.finish(ctx, err)
		case <-ctx.Done():
			return s.giveUp(done, ctx.Err())
		case <-stop:
			stop = nil
			grace = s.c.clock.After(s.c.cfg.ShutdownGrace)
		case <-grace:
			return s.giveUp(done, &Error{Code: CodeTimeout, Msg: "agent shutdown drain", Err: errors.New("shutdown grace elapsed with messages in flight")})
		}
	}
}

// giveUp ends a session cut off by a hard stop or an expired grace. Handlers
// still running are told to stop (their messages stay uncommitted), what
// was handled before is committed within finalCommitBound, and the
// membership is dropped, not left, so no offset moves past unhandled work.
// The membership is dropped only once the loop has returned: while a
// handler that ignores its cancellation still runs, no other member may
// take its partition. If the loop does not return within loopExitWait, Run
// returns anyway and the loop drops the membership when it ends.
func (s *session) giveUp(done <-chan error, err error) error {
	s.cancelWork()
	if s.flushHandled != nil {
		if ferr := s.flushHandled(); ferr != nil {
			s.c.log.Warn("cannot commit the records handled before the stop; they will be redelivered", "error", ferr)
		}
	}
	t := time.NewTimer(loopExitWait)
	defer t.Stop()
	select {
	case <-done:
		_ = s.sub.Close()
		return err
	case <-t.C:
	}
	s.mu.Lock()
	ended := s.loopEnded
	s.abandoned = !ended
	s.mu.Unlock()
	if ended {
		<-done
		_ = s.sub.Close()
	} else {
		s.c.log.Warn("a handler ignores its cancellation; the group membership is kept until it returns")
	}
	return err
}

func stackTrace() string { return string(debug.Stack()) }
