// Package iggytest is an in-process server speaking the Apache Iggy binary
// TCP protocol, for tests: of laser-go itself and of our users' own code
// that talks to Iggy through the official Go SDK, the laser-go Iggy
// transport or the reference's SDKs.
//
// One listener speaks both of Iggy's framings, told apart by the first four
// bytes of a connection: Iggy 0.8's (u32 length, u32 command code, payload),
// whose length is at least 4, and VSR, Iggy 0.9's (a 256-byte consensus
// header on every frame), whose first bytes are the header checksum that
// Iggy's clients leave zero. Four zero bytes are VSR; anything else is 0.8.
// A client that sends a non-zero checksum is thus read as 0.8 and closed for
// its bad length.
//
// It answers the commands the SDKs and the transport use (ping, login,
// personal access tokens, cluster metadata, streams, topics, partitions,
// consumer groups, send, poll and consumer offsets) with Iggy's byte
// layouts and rules for the framing: not-found lookups answer an empty OK,
// ids are 0-based, every entity is addressed by id or name, commands other
// than ping and login need a login on the same connection, group membership
// belongs to the connection and ends with it. Each Iggy stream is backed by
// the engine of the embedded log (the one behind package embedlog).
//
// Over VSR a register (password or personal access token) opens a session
// the later requests must name; a refused login, a request of another
// session, an unknown operation or an oversized frame is answered with an
// eviction frame and the connection closes, the reason logged. Replies echo
// the request number and operation; metadata and stored-offset operations
// answer with Iggy's result section (count, then {index, result} entries),
// which carries their rejections, and the other operations carry an error
// in the reply header's status. Payloads are 0.9's where 0.9 changed them:
// register, stream and topic headers (with options; a topic's options,
// such as the reference SDK's consumer_offset_durability, are kept and
// echoed), message batches in send and poll, the ack level of offset
// requests, the send confirmation, group sync and a one-node cluster
// metadata. Message and batch checksums (XXH3-64) are verified on send and
// set on poll, as Iggy 0.9 sets them (package iggy's client checks the
// message checksums of a poll, not the batch's); the consensus header's
// checksums are neither checked nor set, and request numbers are echoed,
// not checked for order.
//
// It is a testing tool, not a production broker: everything lives in memory,
// there is one root user and no permissions, consumer groups rebalance by a
// full round robin at once (no cooperative hand-over), 0.8 message checksums
// are left at 0, and user-header keys come back as strings whatever kind they
// were sent with.
//
// Tests can inject faults: drop every connection, hang requests of a
// command, answer the next requests of a command with an error status, and
// stop accepting connections. Faults are keyed by command code in both
// framings (a VSR register is CmdLoginRegister). A test starts one per test:
//
//	srv := iggytest.Start(t, iggytest.Config{}) // 127.0.0.1, a free port, closed when t ends
//	tr, err := iggy.Dial(ctx, "iggy://iggy:iggy@"+srv.Addr()+"/my_stream", iggy.Config{})
//	...
//	srv.FailNext(iggytest.CmdStoreOffset, iggytest.StatusInvalidOffset, 1)
package iggytest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/internal/logstore"
)

// maxFrame bounds a request payload of the 0.8 framing, and a whole frame,
// header included, of the VSR framing (a request, and a poll reply, as
// Iggy's frame limit); a larger request closes the connection instead of
// allocating it.
const maxFrame = 64 << 20

// maxLoginFrame bounds a request payload before login: a ping, a login or a
// token login fits, and a client with no credentials holds no more memory.
const maxLoginFrame = 4 << 10

// Defaults that keep a listening server from being held open: Iggy clients
// log in at once and ping every 5 s while idle.
const (
	defaultMaxConnections = 1024
	defaultLoginTimeout   = 30 * time.Second
	defaultIdleTimeout    = 2 * time.Minute
	defaultFrameTimeout   = 30 * time.Second
)

// Config configures a Server; the zero value is usable, and a field left
// zero takes its default.
type Config struct {
	// Username and Password are the root user's; default iggy/iggy, what a
	// real server started with IGGY_ROOT_USERNAME=iggy and
	// IGGY_ROOT_PASSWORD=iggy accepts. Set both or neither.
	Username, Password string
	// Tokens are accepted in a personal access token login as the root
	// user. Default none.
	Tokens []string
	// Clock stamps messages and entity creation times (Unix µs). Default
	// clock.System.
	Clock clock.Clock
	// Logger receives connection errors and recovered handler panics.
	// Default: discarded.
	Logger *slog.Logger
	// MaxConnections is how many client connections the server keeps at
	// once; further ones are refused. Default 1024.
	MaxConnections int
	// LoginTimeout, IdleTimeout and FrameTimeout are how long a connection
	// may go without logging in, without starting a request, and between a
	// request's header and the last byte of its payload (or to write one
	// reply); the connection is closed past any of them. Defaults 30 s,
	// 2 min and 30 s.
	LoginTimeout, IdleTimeout, FrameTimeout time.Duration
}

type config struct {
	username, password string
	tokens             []string
	clock              clock.Clock
	logger             *slog.Logger
	onPanic            func(v any, stack []byte)
	maxConns           int
	loginTimeout       time.Duration
	idleTimeout        time.Duration
	frameTimeout       time.Duration
}

// resolve is c with its defaults filled in; onPanic replaces the default
// reaction to a handler panic (logging it), when set.
func (c Config) resolve(onPanic func(v any, stack []byte)) config {
	cfg := config{
		username:     "iggy",
		password:     "iggy",
		tokens:       c.Tokens,
		clock:        cmp.Or[clock.Clock](c.Clock, clock.System{}),
		logger:       c.Logger,
		onPanic:      onPanic,
		maxConns:     cmp.Or(c.MaxConnections, defaultMaxConnections),
		loginTimeout: cmp.Or(c.LoginTimeout, defaultLoginTimeout),
		idleTimeout:  cmp.Or(c.IdleTimeout, defaultIdleTimeout),
		frameTimeout: cmp.Or(c.FrameTimeout, defaultFrameTimeout),
	}
	if c.Username != "" || c.Password != "" {
		cfg.username, cfg.password = c.Username, c.Password
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Server is an in-process Iggy protocol server, 0.8 and VSR framings on one
// listener. Its methods are safe for concurrent use.
type Server struct {
	cfg  config
	addr string

	mu         sync.Mutex
	ln         net.Listener
	closed     bool
	conns      map[*conn]struct{}
	nextClient uint32
	// nextSession numbers VSR sessions; the last one opened.
	nextSession uint64
	wg          sync.WaitGroup

	// The Iggy state, guarded by mu.
	streams     map[uint32]*stream
	streamNames map[string]*stream
	nextStream  uint32
	tokens      map[string]*token

	// Fault injection, guarded by mu.
	hung     map[uint32]bool
	unhang   chan struct{}
	failures map[uint32]*failure
	requests map[uint32]uint64
	held     int
	// notify is closed and replaced whenever a request arrives or starts
	// being held, so tests wait for those without sleeping.
	notify  chan struct{}
	watched bool
}

// Start starts a server on a free loopback port, configured by cfg
// (iggytest.Config{} for the defaults), and closes it when the test ends. A
// panic in a request handler fails the test.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s := newServer(cfg.resolve(func(v any, stack []byte) {
		t.Errorf("iggytest: request handler panicked: %v\n%s", v, stack)
	}))
	if err := s.listen("127.0.0.1:0"); err != nil {
		t.Fatalf("iggytest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Listen starts a server on addr (host:port; port 0 picks a free one),
// configured by cfg, for a standalone development broker. Close stops it.
func Listen(addr string, cfg Config) (*Server, error) {
	s := newServer(cfg.resolve(nil))
	if err := s.listen(addr); err != nil {
		return nil, err
	}
	return s, nil
}

// listen accepts connections on addr.
func (s *Server) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	s.addr = ln.Addr().String()
	s.ln = ln
	s.wg.Add(1)
	go s.accept(ln)
	return nil
}

// newServer builds a server that is not listening yet.
func newServer(cfg config) *Server {
	s := &Server{
		cfg:         cfg,
		conns:       make(map[*conn]struct{}),
		streams:     make(map[uint32]*stream),
		streamNames: make(map[string]*stream),
		tokens:      make(map[string]*token),
		hung:        make(map[uint32]bool),
		unhang:      make(chan struct{}),
		failures:    make(map[uint32]*failure),
		requests:    make(map[uint32]uint64),
		notify:      make(chan struct{}),
	}
	for i, tok := range cfg.tokens {
		s.tokens[tok] = &token{name: fmt.Sprintf("option-%d", i)}
	}
	return s
}

// Addr returns the host:port the server listens on.
func (s *Server) Addr() string { return s.addr }

// Close stops the server: it stops listening, drops every connection and
// waits for the connection goroutines to end. Closing twice is a no-op.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if s.ln != nil {
		_ = s.ln.Close()
		s.ln = nil
	}
	conns := s.connsLocked()
	close(s.unhang) // release held requests so their goroutines end
	s.unhang = make(chan struct{})
	s.mu.Unlock()
	for _, c := range conns {
		c.drop()
	}
	s.wg.Wait()
}

func (s *Server) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.cfg.logger.Warn("iggytest: accept failed", "err", err)
			}
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		if len(s.conns) >= s.cfg.maxConns {
			s.mu.Unlock()
			s.cfg.logger.Warn("iggytest: too many connections; closing the new one", "max", s.cfg.maxConns)
			_ = nc.Close()
			continue
		}
		c := s.attachLocked(nc)
		s.mu.Unlock()
		go c.serve()
	}
}

// attachLocked registers a new client connection and counts it in the
// server's wait group; the caller starts c.serve.
func (s *Server) attachLocked(nc net.Conn) *conn {
	s.nextClient++
	c := &conn{s: s, nc: nc, id: s.nextClient, done: make(chan struct{}), groups: make(map[*logstore.Group]*membership)}
	s.conns[c] = struct{}{}
	s.notifyLocked()
	s.wg.Add(1)
	return c
}

func (s *Server) connsLocked() []*conn {
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}

// loggedIn reports whether c's client has logged in.
func (c *conn) loggedIn() bool {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.authed
}

// now is the server clock in Unix microseconds.
func (s *Server) now() uint64 { return uint64(s.cfg.clock.Now().UnixMicro()) }

// serveFrames runs the request loop of one connection over rw until it
// fails or closes; it is the connection loop minus the bookkeeping, so the
// fuzz target can drive it through a pipe. The first four bytes pick the
// framing (see detectFraming).
func (c *conn) serveFrames(rw io.ReadWriter) {
	f := newFrameIO(c, rw)
	f.awaitRequest()
	var first [4]byte
	if _, err := io.ReadFull(rw, first[:]); err != nil {
		return
	}
	f.r = io.MultiReader(bytes.NewReader(first[:]), rw)
	if detectFraming(first) == framingVSR {
		c.serveVSR(f)
		return
	}
	c.serveLegacy(f)
}

// frameIO is a connection's byte stream with its deadlines: a request must
// start within the idle (or, before login, the login) timeout, and its rest
// arrive, and its reply leave, within the frame timeout.
type frameIO struct {
	c       *conn
	r       io.Reader
	w       io.Writer
	readBy  interface{ SetReadDeadline(time.Time) error }
	writeBy interface{ SetWriteDeadline(time.Time) error }
	loginBy time.Time
}

func newFrameIO(c *conn, rw io.ReadWriter) *frameIO {
	f := &frameIO{c: c, r: rw, w: rw, loginBy: time.Now().Add(c.s.cfg.loginTimeout)}
	f.readBy, _ = rw.(interface{ SetReadDeadline(time.Time) error })
	// A client that sends without reading would otherwise block the reply
	// write, and hold its connection slot, forever.
	f.writeBy, _ = rw.(interface{ SetWriteDeadline(time.Time) error })
	return f
}

// awaitRequest arms the deadline for the start of the next request and
// reports whether the client is logged in.
func (f *frameIO) awaitRequest() bool {
	authed := f.c.loggedIn()
	if f.readBy != nil {
		by := time.Now().Add(f.c.s.cfg.idleTimeout)
		if !authed && f.loginBy.Before(by) {
			by = f.loginBy
		}
		_ = f.readBy.SetReadDeadline(by)
	}
	return authed
}

// readBody reads n payload bytes under the frame timeout, growing with the
// bytes that actually arrive, so a bogus length cannot make the server
// allocate the maximum up front.
func (f *frameIO) readBody(n uint32) ([]byte, error) {
	if f.readBy != nil {
		_ = f.readBy.SetReadDeadline(time.Now().Add(f.c.s.cfg.frameTimeout))
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(n, 1<<20)))
	if _, err := io.CopyN(buf, f.r, int64(n)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// write sends bufs in one writev on a socket, under the frame timeout.
func (f *frameIO) write(bufs net.Buffers) error {
	if f.writeBy != nil {
		_ = f.writeBy.SetWriteDeadline(time.Now().Add(f.c.s.cfg.frameTimeout))
	}
	_, err := bufs.WriteTo(f.w)
	return err
}

// serveLegacy is the request loop of the Iggy 0.8 framing: u32 length,
// u32 command code, payload; answered with u32 status, u32 length, payload.
func (c *conn) serveLegacy(f *frameIO) {
	var hdr [8]byte
	cfg := &c.s.cfg
	for {
		authed := f.awaitRequest()
		if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
			return
		}
		length := leU32(hdr[0:4])
		code := leU32(hdr[4:8])
		limit := uint32(maxFrame)
		if !authed {
			limit = maxLoginFrame
		}
		if length < 4 || length-4 > limit {
			cfg.logger.Warn("iggytest: bad frame length; closing the connection", "client", c.id, "length", length, "logged_in", authed,
				"hint", "a VSR client is told apart by a zero header checksum (the first 4 bytes); one that sets it is read as Iggy 0.8")
			return
		}
		payload, err := f.readBody(length - 4)
		if err != nil {
			return
		}
		resp, status, ok := c.s.handle(c, code, payload)
		if !ok {
			return
		}
		if status != 0 {
			resp = nil // an error status never carries a payload
		}
		var head [8]byte
		putLE32(head[0:4], status)
		putLE32(head[4:8], uint32(len(resp)))
		// No copy of a large poll answer.
		if err := f.write(net.Buffers{head[:], resp}); err != nil {
			return
		}
	}
}

func leU32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func putLE32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}
