package iggytest

import (
	"io"
	"net"
	"runtime/debug"
	"sync"

	"github.com/lasergo/laser/internal/logstore"
)

// conn is one client connection: an Iggy session with its own client id,
// login state and consumer group memberships.
type conn struct {
	s  *Server
	nc net.Conn
	id uint32

	done     chan struct{} // closed when the connection is dropped
	dropOnce sync.Once

	// Guarded by s.mu.
	authed bool
	groups map[*logstore.Group]*membership
	// session is the VSR session a register opened (0: none).
	session uint64

	// Owned by the connection goroutine: the VSR request being answered,
	// and an eviction a handler asks for instead of a reply.
	vsrRequest vsrRequestHeader
	vsrEvict   error
}

// sessionID is the connection's VSR session, 0 before register.
func (c *conn) sessionID() uint64 {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.session
}

// membership is this connection's seat in a consumer group.
type membership struct {
	topic *logstore.Topic
	group *logstore.Group
	// next is the round-robin index of the next partition a group poll
	// without a partition reads; current is the partition it read last,
	// where a store without a partition goes.
	next    int
	current uint32
	polled  bool
}

func (c *conn) member() uint64 { return uint64(c.id) }

// serve runs the connection until the client leaves, the server drops it or
// a handler panics; then it ends the session like Iggy does on disconnect,
// leaving every consumer group.
func (c *conn) serve() { c.serveWith(c.nc) }

// serveWith is serve over rw, which the fuzz target replaces with buffers.
func (c *conn) serveWith(rw io.ReadWriter) {
	defer c.s.wg.Done()
	defer c.finish()
	defer func() {
		if v := recover(); v != nil {
			stack := debug.Stack()
			if c.s.cfg.onPanic != nil {
				c.s.cfg.onPanic(v, stack)
				return
			}
			c.s.cfg.logger.Error("iggytest: request handler panicked; connection closed", "client", c.id, "panic", v, "stack", string(stack))
		}
	}()
	c.serveFrames(rw)
}

// drop closes the connection and releases a request held by Hang.
func (c *conn) drop() {
	c.dropOnce.Do(func() {
		close(c.done)
		_ = c.nc.Close()
	})
}

func (c *conn) finish() {
	c.drop()
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	delete(c.s.conns, c)
	c.leaveAllLocked()
	c.s.notifyLocked()
}

// leaveAllLocked ends every group membership of the connection.
func (c *conn) leaveAllLocked() {
	for g := range c.groups {
		_ = g.Leave(c.member()) // the group may be gone already
	}
	clear(c.groups)
}

// handle answers one request: it counts it, holds it while its command is
// hung, applies an injected failure, checks the login and dispatches. ok is
// false when the connection was dropped while the request was held.
func (s *Server) handle(c *conn, code uint32, payload []byte) (resp []byte, status uint32, ok bool) {
	s.mu.Lock()
	s.requests[code]++
	s.notifyLocked()
	for s.hung[0] || s.hung[code] {
		release := s.unhang
		s.held++
		s.notifyLocked()
		s.mu.Unlock()
		select {
		case <-release:
		case <-c.done:
		}
		s.mu.Lock()
		s.held--
		select {
		case <-c.done:
			s.mu.Unlock()
			return nil, 0, false
		default:
		}
	}
	if f := s.failures[code]; f != nil {
		f.n--
		if f.n <= 0 {
			delete(s.failures, code)
		}
		s.mu.Unlock()
		return nil, f.status, true
	}
	s.mu.Unlock()
	resp, err := s.dispatch(c, code, payload)
	if err != nil {
		return nil, statusOf(err), true
	}
	return resp, 0, true
}

// dispatch runs the handler of code under the server lock; the deferred
// unlock keeps the server usable when a handler panics.
func (s *Server) dispatch(c *conn, code uint32, payload []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.vsrRequest.operation != 0 {
		return s.routeVSR(c, code, payload)
	}
	return s.route(c, code, payload, framingLegacy)
}

// route picks the handler of a command code.
func (s *Server) route(c *conn, code uint32, p []byte, f framing) ([]byte, error) {
	switch code {
	case CmdPing:
		return s.ping(p)
	case CmdLogin:
		return s.login(c, p)
	case CmdLoginWithToken:
		return s.loginWithToken(c, p)
	}
	if !c.authed {
		return nil, fail(StatusUnauthenticated, "log in first")
	}
	switch code {
	case CmdClusterMetadata:
		return nil, fail(StatusFeatureUnavailable, "clustering is disabled")
	case CmdLogout:
		return s.logout(c, p)
	case CmdGetTokens:
		return s.getTokens(p)
	case CmdCreateToken:
		return s.createToken(p)
	case CmdDeleteToken:
		return s.deleteToken(p)
	case CmdGetStream:
		return s.getStream(p, f)
	case CmdGetStreams:
		return s.getStreams(p, f)
	case CmdCreateStream:
		return s.createStream(p, f)
	case CmdDeleteStream:
		return s.deleteStream(p)
	case CmdGetTopic:
		return s.getTopic(p, f)
	case CmdGetTopics:
		return s.getTopics(p, f)
	case CmdCreateTopic:
		return s.createTopic(p, f)
	case CmdDeleteTopic:
		return s.deleteTopic(p)
	case CmdCreatePartitions:
		return s.createPartitions(p)
	case CmdGetConsumerGroup:
		return s.getGroup(p)
	case CmdGetConsumerGroups:
		return s.getGroups(p)
	case CmdCreateConsumerGroup:
		return s.createGroup(p)
	case CmdDeleteConsumerGroup:
		return s.deleteGroup(p)
	case CmdJoinConsumerGroup:
		return s.joinGroup(c, p)
	case CmdLeaveConsumerGroup:
		return s.leaveGroup(c, p)
	case CmdSend:
		return s.send(p, f)
	case CmdPoll:
		return s.poll(c, p, f)
	case CmdGetOffset:
		return s.getOffset(p)
	case CmdStoreOffset:
		return s.storeOffset(c, p)
	case CmdDeleteOffset:
		return s.deleteOffset(c, p)
	case CmdGetStats, CmdGetMe, CmdUpdateStream, CmdUpdateTopic, CmdDeletePartitions:
		return nil, fail(StatusFeatureUnavailable, "command not supported by the test server")
	}
	return nil, fail(StatusInvalidCommand, "unknown command code")
}
