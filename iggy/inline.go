package iggy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/lasergo/laser/clock"
)

// pastDeadline fails a socket's pending and future reads and writes at once.
var pastDeadline = time.Unix(1, 0)

// inlineOK reports whether calls on l can run on the caller's goroutine,
// bounded by socket deadlines: the socket must be known and timeouts must
// follow the real clock (an injected clock drives the watcher of bounded).
func (t *Transport) inlineOK(l *link) bool {
	return t.realClock() && l.socket != nil
}

// realClock reports whether timeouts follow the real clock, as socket
// deadlines do.
func (t *Transport) realClock() bool {
	_, real := t.cfg.clock.(clock.System)
	return real
}

// boundedVSR is boundedInline for a VSR link, whose client puts every
// exchange under a socket deadline of the call timeout itself: a
// cancelled ctx aborts the client (its socket deadline moves to the past
// and stays there), and the link is abandoned.
func (t *Transport) boundedVSR(ctx context.Context, l *link, fn func(c iggyClient) error) (class errClass, abandoned bool, err error) {
	if err := ctx.Err(); err != nil {
		return classPermanent, false, err
	}
	stop := context.AfterFunc(ctx, l.vsr.abort)
	err = callRecovered(l.client, fn)
	return t.inlineOutcome(ctx, err, !stop())
}

// boundedInline is bounded without the watcher goroutine: the call runs on
// the caller's goroutine under a socket deadline of the call timeout, and a
// cancelled ctx moves the deadline to the past so the call fails at once.
// That spares two goroutine handoffs per call, which on a busy machine cost
// more than the call itself. Either way the link is abandoned (the reply may
// be half read); so this path serves only connections whose calls all come
// from one owner, a subscription's, where a cancelled call means the owner is
// stopping.
func (t *Transport) boundedInline(ctx context.Context, l *link, fn func(c iggyClient) error) (class errClass, abandoned bool, err error) {
	if err := ctx.Err(); err != nil {
		return classPermanent, false, err
	}
	// Calls of one link set and clear the socket's deadline one at a time.
	l.inlineMu.Lock()
	defer l.inlineMu.Unlock()
	_ = l.socket.SetDeadline(time.Now().Add(t.cfg.callTimeout))
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = l.socket.SetDeadline(pastDeadline)
		close(fired)
	})
	err = callRecovered(l.client, fn)
	cancelled := !stop()
	if cancelled {
		// Set the deadline only after the cancellation has set its own.
		<-fired
	}
	class, abandoned, err = t.inlineOutcome(ctx, err, cancelled)
	if abandoned || (err != nil && class == classLost) {
		// The reply may be half read, and the link is about to be dropped:
		// every read and write on it keeps failing until then, so the SDK's
		// heartbeat cannot take the rest of a reply for its own.
		_ = l.socket.SetDeadline(pastDeadline)
	} else {
		_ = l.socket.SetDeadline(time.Time{})
	}
	return class, abandoned, err
}

// inlineOutcome sorts the result of a call boundedInline made.
func (t *Transport) inlineOutcome(ctx context.Context, err error, cancelled bool) (errClass, bool, error) {
	switch {
	case err == nil:
		// Done, perhaps just before the cancellation reached the socket.
		return 0, false, nil
	case cancelled:
		return classPermanent, true, ctx.Err()
	case errors.Is(err, ErrSDKPanic):
		return classPermanent, false, err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return classTransient, true, fmt.Errorf("%w after %v", ErrTimeout, t.cfg.callTimeout)
	}
	return classify(err), false, err
}

// callRecovered runs fn, turning an SDK panic into an error.
func callRecovered(c iggyClient, fn func(c iggyClient) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: %v", ErrSDKPanic, v)
		}
	}()
	return fn(c)
}
