package iggytest

import (
	"context"
	"fmt"
	"net"
)

// failure is an injected error answer: the next n requests of a command get
// status.
type failure struct {
	status uint32
	n      int
}

// DropConnections closes every open client connection at once, as a crashed
// or restarted server would; each session leaves its consumer groups. New
// connections are still accepted.
func (s *Server) DropConnections() {
	s.mu.Lock()
	conns := s.connsLocked()
	s.mu.Unlock()
	for _, c := range conns {
		c.drop()
	}
}

// Hang holds every later request of command code (0: of every command)
// without an answer until Unhang, or until its connection is dropped. It
// models a server that is stuck while its kernel still accepts bytes.
func (s *Server) Hang(code uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hung[code] = true
}

// Unhang lifts every Hang and lets the held requests through.
func (s *Server) Unhang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.hung)
	close(s.unhang)
	s.unhang = make(chan struct{})
}

// FailNext answers the next n requests of command code with the error
// status instead of running them; n <= 0 cancels a pending injection.
func (s *Server) FailNext(code, status uint32, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 || status == 0 {
		delete(s.failures, code)
		return
	}
	s.failures[code] = &failure{status: status, n: n}
}

// StopAccepting closes the listening socket, so new connections are refused
// as by a server that is down; open connections stay. Resume listens again
// on the same address.
func (s *Server) StopAccepting() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		_ = s.ln.Close()
		s.ln = nil
	}
}

// Resume listens again on the server's address after StopAccepting.
func (s *Server) Resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("iggytest: resume: server is closed")
	}
	if s.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("iggytest: resume listening on %s: %w", s.addr, err)
	}
	s.ln = ln
	s.wg.Add(1)
	go s.accept(ln)
	return nil
}

// Requests returns how many requests of command code the server has
// received, counting held, failed and refused ones.
func (s *Server) Requests(code uint32) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[code]
}

// Connections returns how many client connections are open.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// notifyLocked wakes the waiters of waitUntil; without waiters it does
// nothing, so the request path allocates no channel.
func (s *Server) notifyLocked() {
	if !s.watched {
		return
	}
	close(s.notify)
	s.notify = make(chan struct{})
	s.watched = false
}

// waitUntil blocks until cond (run with s.mu held) is true or ctx ends.
func (s *Server) waitUntil(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		if cond() {
			s.mu.Unlock()
			return nil
		}
		ch := s.notify
		s.watched = true
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitHeld blocks until at least n requests are being held by Hang, or ctx
// ends; a test uses it to know a call is stuck before it acts.
func (s *Server) WaitHeld(ctx context.Context, n int) error {
	return s.waitUntil(ctx, func() bool { return s.held >= n })
}

// WaitRequests blocks until the server has received at least n requests of
// command code, or ctx ends.
func (s *Server) WaitRequests(ctx context.Context, code uint32, n uint64) error {
	return s.waitUntil(ctx, func() bool { return s.requests[code] >= n })
}

// WaitConnections blocks until exactly n client connections are open, or
// ctx ends; after a client closes, it tells the test the server has ended
// the session.
func (s *Server) WaitConnections(ctx context.Context, n int) error {
	return s.waitUntil(ctx, func() bool { return len(s.conns) == n })
}
