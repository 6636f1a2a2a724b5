package iggy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/apache/iggy/foreign/go/client/tcp"
)

// link is one SDK client: one TCP connection and one Iggy session.
type link struct {
	client iggyClient
	socket net.Conn // nil when the SDK layout was not recognised
	// sdkMu is the SDK client's request mutex, held by the subscription's
	// own poll exchange (rawpoll.go); nil when not recognised, and then
	// polls go through the SDK.
	sdkMu    *sync.Mutex
	once     sync.Once
	inlineMu sync.Mutex // serializes boundedInline's use of the socket deadline
	// vsr is the client when the link speaks VSR (then client is vsr and
	// socket and sdkMu are nil).
	vsr *vsrClient
	// closed ends the link's heartbeat.
	closed chan struct{}
}

// close ends the link without waiting: closing the socket fails a call in
// flight, which lets the SDK's Close (run aside, as it waits for that call)
// finish, and the heartbeat stops.
func (l *link) close() {
	l.once.Do(func() {
		if l.closed != nil {
			close(l.closed)
		}
		if l.socket != nil {
			_ = l.socket.Close()
		}
		go func() { _ = l.client.Close() }()
	})
}

// session keeps one logical connection to Iggy alive: it builds a client
// and logs in, runs every call under a deadline with panics recovered, and
// after the connection broke builds a new one on the next call, backing off
// after failed attempts. setup runs after each login (a subscription joins
// its group there).
type session struct {
	tr    *Transport
	name  string
	setup func(ctx context.Context, l *link) error
	// owned marks a connection whose calls all come from one owner (a
	// subscription): they run inline, see boundedInline.
	owned bool

	dialMu sync.Mutex // one rebuild at a time

	mu       sync.Mutex
	cur      *link
	closed   bool
	failures int       // failed rebuilds in a row
	retryAt  time.Time // no rebuild before this
	builds   int       // successful builds, the first included
}

func newSession(tr *Transport, name string, setup func(ctx context.Context, l *link) error) *session {
	return &session{tr: tr, name: name, setup: setup}
}

// call runs fn on a live link, connecting first when needed.
func (s *session) call(ctx context.Context, op string, fn func(c iggyClient) error) error {
	l, err := s.link(ctx, op)
	if err != nil {
		return err
	}
	return s.run(ctx, op, l, fn)
}

// callLink is call for fn that needs the link itself (its socket), not only
// its client.
func (s *session) callLink(ctx context.Context, op string, fn func(l *link) error) error {
	l, err := s.link(ctx, op)
	if err != nil {
		return err
	}
	return s.run(ctx, op, l, func(iggyClient) error { return fn(l) })
}

// callCurrent runs fn on the current link without reconnecting; ok is false
// when there is none.
func (s *session) callCurrent(ctx context.Context, op string, fn func(c iggyClient) error) (err error, ok bool) {
	s.mu.Lock()
	l := s.cur
	s.mu.Unlock()
	if l == nil {
		return nil, false
	}
	return s.run(ctx, op, l, fn), true
}

// link returns the live link, building one (after the backoff delay, if the
// last attempt failed) when the connection is down.
func (s *session) link(ctx context.Context, op string) (*link, error) {
	if l, err := s.current(op); l != nil || err != nil {
		return l, err
	}
	s.dialMu.Lock()
	defer s.dialMu.Unlock()
	if l, err := s.current(op); l != nil || err != nil {
		return l, err
	}
	s.mu.Lock()
	wait := s.retryAt.Sub(s.tr.cfg.clock.Now())
	s.mu.Unlock()
	if wait > 0 {
		select {
		case <-s.tr.cfg.clock.After(wait):
		case <-ctx.Done():
			return nil, failed(op, fmt.Errorf("waiting to reconnect: %w", ctx.Err()))
		}
	}
	l, err := s.tr.connect(ctx, op)
	if err == nil && s.setup != nil {
		if err = s.setup(ctx, l); err != nil {
			l.close()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failures++
		s.retryAt = s.tr.cfg.clock.Now().Add(s.tr.cfg.backoff(s.failures))
		s.tr.cfg.logger.Warn("iggy: connecting failed", "session", s.name, "addr", s.tr.cs.addr, "attempt", s.failures, "err", err)
		return nil, err
	}
	if s.closed {
		l.close()
		return nil, wrap(op, classDisconnected, ErrClosed)
	}
	if s.builds > 0 {
		s.tr.cfg.logger.Info("iggy: reconnected", "session", s.name, "addr", s.tr.cs.addr, "after_failures", s.failures)
	}
	s.builds++
	s.failures = 0
	s.retryAt = time.Time{}
	s.cur = l
	return l, nil
}

func (s *session) current(op string) (*link, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, wrap(op, classDisconnected, ErrClosed)
	}
	return s.cur, nil
}

// run calls fn on l under the call deadline and sorts its error; a link
// that failed, timed out or lost its session is dropped, to be rebuilt on
// the next call.
func (s *session) run(ctx context.Context, op string, l *link, fn func(c iggyClient) error) error {
	var err error
	var class errClass
	var abandoned bool
	switch {
	case s.owned && l.vsr != nil && s.tr.realClock():
		class, abandoned, err = s.tr.boundedVSR(ctx, l, fn)
	case s.owned && s.tr.inlineOK(l):
		class, abandoned, err = s.tr.boundedInline(ctx, l, fn)
	default:
		class, abandoned, err = s.tr.bounded(ctx, l, fn)
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && !abandoned {
		// This caller gave up, but the call may still complete: the link is
		// shared, so it is dropped only if the call outlives the timeout.
		return failed(op, err)
	}
	if abandoned || class == classLost || class == classDisconnected || class == classSession {
		s.drop(l, err)
	}
	return wrap(op, class, err)
}

// drop forgets l if it is still the current link, and closes it.
func (s *session) drop(l *link, cause error) {
	s.mu.Lock()
	if s.cur == l {
		s.cur = nil
		s.tr.cfg.logger.Warn("iggy: connection dropped", "session", s.name, "addr", s.tr.cs.addr, "err", cause)
	}
	s.mu.Unlock()
	l.close()
}

// close ends the session for good.
func (s *session) close() {
	s.mu.Lock()
	l := s.cur
	s.cur = nil
	s.closed = true
	s.mu.Unlock()
	if l != nil {
		l.close()
	}
}

// bounded runs fn on l within the call timeout and ctx, recovering an SDK
// panic. abandoned is true when fn did not return within the call timeout;
// the call then keeps running aside until the link is closed. A cancelled
// ctx returns at once without abandoning the link.
func (t *Transport) bounded(ctx context.Context, l *link, fn func(c iggyClient) error) (class errClass, abandoned bool, err error) {
	if err := ctx.Err(); err != nil {
		return classPermanent, false, err
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- fmt.Errorf("%w: %v", ErrSDKPanic, v)
			}
		}()
		done <- fn(l.client)
	}()
	select {
	case err := <-done:
		if err == nil {
			return 0, false, nil
		}
		if errors.Is(err, ErrTimeout) {
			// The VSR client's own socket deadline ran out first.
			return classTransient, true, err
		}
		if errors.Is(err, ErrSDKPanic) {
			// The SDK decodes after it has read the whole frame, so the
			// connection is still in step; the answer itself was bad.
			return classPermanent, false, err
		}
		return classify(err), false, err
	case <-t.cfg.clock.After(t.cfg.callTimeout):
		return classTransient, true, fmt.Errorf("%w after %v", ErrTimeout, t.cfg.callTimeout)
	case <-ctx.Done():
		// Only this caller gives up. The call keeps running on the link; if
		// it does not finish within the call timeout the link is closed, which
		// ends it, as a timed-out call's would be.
		go func() {
			select {
			case <-done:
			case <-t.cfg.clock.After(t.cfg.callTimeout):
				l.close()
			}
		}()
		return classPermanent, false, ctx.Err()
	}
}

// connect builds a logged-in link. The address is probed first because the
// SDK constructor retries a refused dial forever; the constructor still runs
// aside, bounded by the dial timeout, and a client it returns too late is
// closed.
func (t *Transport) connect(ctx context.Context, op string) (*link, error) {
	if t.cs.protocol == protocolVSR {
		return t.connectVSR(ctx, op)
	}
	d := net.Dialer{Timeout: t.cfg.dialTimeout}
	probe, err := d.DialContext(ctx, "tcp", t.cs.addr)
	if err != nil {
		return nil, wrap(op, classLost, fmt.Errorf("cannot reach Iggy at %s: %w", t.cs.addr, err))
	}
	_ = probe.Close()

	ch := make(chan built, 1)
	go func() {
		// The TCP client itself, not client.NewIggyClient: that one starts a
		// heartbeat that prints its failures on the process's standard
		// logger. The link runs its own (heartbeat below).
		c, err := tcp.NewIggyTcpClient(tcp.WithServerAddress(t.cs.addr))
		if err != nil {
			ch <- built{nil, err}
			return
		}
		ch <- built{c, nil}
	}()
	var b built
	select {
	case b = <-ch:
	case <-t.cfg.clock.After(t.cfg.dialTimeout):
		go closeLate(ch)
		return nil, wrap(op, classLost, fmt.Errorf("connecting to Iggy at %s: no connection within %v", t.cs.addr, t.cfg.dialTimeout))
	case <-ctx.Done():
		go closeLate(ch)
		return nil, failed(op, fmt.Errorf("connecting to Iggy at %s: %w", t.cs.addr, ctx.Err()))
	}
	if b.err != nil {
		return nil, wrap(op, classLost, fmt.Errorf("connecting to Iggy at %s: %w", t.cs.addr, b.err))
	}
	l := &link{client: b.c, socket: sdkSocket(b.c), sdkMu: sdkMutex(b.c), closed: make(chan struct{})}
	class, _, err := t.bounded(ctx, l, func(c iggyClient) error {
		if l.socket != nil && l.sdkMu != nil {
			// Our own login frame: the SDK's login asks for cluster metadata
			// and prints each step to the process's standard logger, which a
			// library must not write to.
			reply, err := exchange(l.socket, l.sdkMu, t.cs.loginFrame(), 1<<10) // a login answers a 4-byte user id
			if err == nil && len(reply) != 4 {
				err = fmt.Errorf("iggy: a login reply of %d bytes, want a 4-byte user id: the server does not speak Iggy 0.8", len(reply))
			}
			return err
		}
		if t.cs.token != "" {
			_, err := c.LoginWithPersonalAccessToken(t.cs.token)
			return err
		}
		_, err := c.LoginUser(t.cs.username, t.cs.password)
		return err
	})
	if err != nil {
		return nil, loginFailed(op, t.cs.addr, l, class, err)
	}
	t.cfg.logger.Debug("iggy: logged in", "addr", t.cs.addr, "token", t.cs.token != "")
	go t.heartbeat(l)
	return l, nil
}

// loginFailed closes l, whose login failed with err of class, and returns
// the error of op: a login refused is permanent, not a lost session.
func loginFailed(op, addr string, l *link, class errClass, err error) error {
	l.close()
	if class == classSession {
		class = classPermanent
	}
	return wrap(op, class, fmt.Errorf("logging in to Iggy at %s: %w", addr, err))
}

// heartbeatInterval is how often an idle link pings, as the SDK's own
// heartbeat did: servers close connections that stay silent.
const heartbeatInterval = 5 * time.Second

// heartbeat pings over l every heartbeatInterval until l is closed; a
// failure is the transport's to log (at debug: the next call reconnects).
func (t *Transport) heartbeat(l *link) {
	for {
		select {
		case <-l.closed:
			return
		case <-t.cfg.clock.After(heartbeatInterval):
		}
		if _, _, err := t.bounded(context.Background(), l, func(c iggyClient) error { return c.Ping() }); err != nil {
			t.cfg.logger.Debug("iggy: heartbeat failed", "addr", t.cs.addr, "err", err)
		}
	}
}

// built is what the SDK constructor returned.
type built struct {
	c   iggyClient
	err error
}

// closeLate closes a client the constructor returns after its caller gave
// up on it; with the server down the constructor retries forever, so this
// goroutine may wait until the server is back.
func closeLate(ch <-chan built) {
	if b := <-ch; b.c != nil {
		_ = b.c.Close()
	}
}
