package iggy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/iggy/internal/vsr"
)

// fakeVSR is a tiny VSR server for tests: it reads request frames and
// answers each with what its handler returns (whole frames, written as
// they are; nil closes the connection). It knows just enough for the
// transport to log in, find a stream and a topic and poll; tests replace
// answers to craft bad ones.
type fakeVSR struct {
	t     *testing.T
	ln    net.Listener
	conns atomic.Int32
	// hangUp names the connection to close after the frame being written.
	hangUp atomic.Int32
	// wrap, when set, wraps each accepted connection (TLS).
	wrap func(net.Conn) net.Conn

	mu     sync.Mutex
	handle func(f *fakeVSR, req fakeRequest) []byte // answers a request; default honest
	logins [][]byte                                 // register bodies received
	nodes  []byte                                   // cluster metadata answer; nil answers with status 1
}

// fakeRequest is one request frame the fake received.
type fakeRequest struct {
	conn    int // which connection, from 1
	hdr     [vsr.HeaderSize]byte
	body    []byte
	op      vsr.Operation
	code    uint32 // the command code, for a non-replicated request
	request uint64
}

func newFakeVSR(t *testing.T) *fakeVSR { return newFakeVSRWrapped(t, nil) }

// newFakeVSRWrapped is newFakeVSR with each connection wrapped (TLS).
func newFakeVSRWrapped(t *testing.T, wrap func(net.Conn) net.Conn) *fakeVSR {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeVSR{t: t, ln: ln, handle: honest, wrap: wrap}
	t.Cleanup(func() { _ = ln.Close() })
	go f.serve()
	return f
}

// setHandle replaces the handler.
func (f *fakeVSR) setHandle(h func(f *fakeVSR, req fakeRequest) []byte) {
	f.mu.Lock()
	f.handle = h
	f.mu.Unlock()
}

func (f *fakeVSR) addr() string { return f.ln.Addr().String() }

func (f *fakeVSR) url(query string) string {
	return "iggy://iggy:iggy@" + f.addr() + "/s?protocol=vsr" + query
}

func (f *fakeVSR) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		n := int(f.conns.Add(1))
		if f.wrap != nil {
			c = f.wrap(c)
		}
		go f.conn(n, c)
	}
}

func (f *fakeVSR) conn(n int, c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		var req fakeRequest
		req.conn = n
		if _, err := io.ReadFull(r, req.hdr[:]); err != nil {
			return
		}
		size := binary.LittleEndian.Uint32(req.hdr[48:])
		if size < vsr.HeaderSize || size > vsr.MaxFrameSize {
			return
		}
		req.body = make([]byte, size-vsr.HeaderSize)
		if _, err := io.ReadFull(r, req.body); err != nil {
			return
		}
		req.op = vsr.Operation(req.hdr[176])
		req.code = binary.LittleEndian.Uint32(req.hdr[196:])
		req.request = binary.LittleEndian.Uint64(req.hdr[168:])
		f.mu.Lock()
		handle := f.handle
		f.mu.Unlock()
		out := handle(f, req)
		if out == nil {
			return
		}
		if _, err := c.Write(out); err != nil || f.hangUp.CompareAndSwap(int32(n), 0) {
			return
		}
	}
}

// reply is a reply frame answering req with status and body.
func reply(req fakeRequest, status uint32, body []byte) []byte {
	h := make([]byte, vsr.HeaderSize, vsr.HeaderSize+len(body))
	binary.LittleEndian.PutUint32(h[48:], uint32(vsr.HeaderSize+len(body)))
	h[60] = byte(vsr.CommandReply)
	copy(h[160:176], req.hdr[128:144]) // the client it answers
	binary.LittleEndian.PutUint64(h[200:], req.request)
	h[208] = byte(req.op)
	binary.LittleEndian.PutUint32(h[216:], status)
	return append(h, body...)
}

// committed is the result section of a committed change, then body.
func committed(body []byte) []byte {
	return append(binary.LittleEndian.AppendUint32(nil, 0), body...)
}

// fakeStream and fakeTopic are the stream and topic the fake serves.
func fakeStream() []byte {
	b := binary.LittleEndian.AppendUint32(nil, 1)
	b = append(b, make([]byte, 28)...) // created, topics (0), size, messages
	b = append(append(b, 1), 's')
	return binary.LittleEndian.AppendUint32(b, 0) // no options
}

func fakeTopic() []byte {
	b := binary.LittleEndian.AppendUint32(nil, 1)
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 1) // one partition
	b = append(b, make([]byte, 33)...)
	b = append(append(b, 1), 't')
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	return append(b, make([]byte, 40)...) // partition 0, empty
}

// honest answers as a one-node server holding stream s with topic t.
func honest(f *fakeVSR, req fakeRequest) []byte {
	switch req.op {
	case vsr.OpRegister:
		f.mu.Lock()
		f.logins = append(f.logins, req.body)
		f.mu.Unlock()
		p := binary.LittleEndian.AppendUint32(nil, 1)
		p = binary.LittleEndian.AppendUint64(p, uint64(req.conn)*100)
		p = binary.LittleEndian.AppendUint32(p, vsr.ProtocolVersion)
		p = append(append(p, 4), "fake"...)
		return reply(req, 0, committed(p))
	case vsr.OpNonReplicated:
		switch req.code {
		case vsr.CodeClusterMetadata:
			f.mu.Lock()
			nodes := f.nodes
			f.mu.Unlock()
			if nodes == nil {
				return reply(req, 1, nil)
			}
			return reply(req, 0, nodes)
		case vsr.CodeGetStream:
			return reply(req, 0, fakeStream())
		case vsr.CodeGetTopic:
			return reply(req, 0, fakeTopic())
		case vsr.CodePollMessages:
			return reply(req, 0, make([]byte, 16))
		}
		return reply(req, 0, nil)
	}
	return reply(req, 0, committed(nil))
}

// answerWith is a handler answering code with bad, and the rest honestly.
func answerWith(code uint32, bad func(req fakeRequest) []byte) func(*fakeVSR, fakeRequest) []byte {
	return func(f *fakeVSR, req fakeRequest) []byte {
		if req.op == vsr.OpNonReplicated && req.code == code {
			return bad(req)
		}
		return honest(f, req)
	}
}

// clusterOf is cluster metadata naming addrs as nodes, the first the
// leader.
func clusterOf(addrs ...string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 1)
	b = append(b, 'c')
	b = binary.LittleEndian.AppendUint32(b, uint32(len(addrs)))
	for i, a := range addrs {
		host, port, _ := net.SplitHostPort(a)
		var p uint16
		for _, d := range port {
			p = p*10 + uint16(d-'0')
		}
		b = binary.LittleEndian.AppendUint32(b, 1)
		b = append(b, byte('a'+i))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(host)))
		b = append(b, host...)
		b = binary.LittleEndian.AppendUint16(b, p)
		role := byte(1)
		if i == 0 {
			role = 0
		}
		b = append(b, 0, 0, 0, 0, 0, 0, role, 0)
	}
	return b
}

func isLost(err error) bool { return errors.Is(err, ErrConnectionLost) }
