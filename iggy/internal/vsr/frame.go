// Package vsr is the frame codec of Iggy's VSR protocol (Iggy server 0.9+),
// the client side only: the 256-byte consensus header every request and
// reply carries, the operations, request ids and sessions, the register
// (login) body, the reply's status and result section, eviction frames, the
// message batches of send and poll, and cluster metadata.
//
// It was written from the protocol's behaviour (apache/iggy's
// core/binary_protocol/src/consensus at server-0.9.0-edge.5 and the Go SDK's
// foreign/go/internal/vsr at foreign/go/v0.9.0-edge.4). It does no I/O:
// package iggy owns the connection, its deadlines and its errors.
package vsr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// HeaderSize is the size of the consensus header in front of every frame.
const HeaderSize = 256

// MaxFrameSize is the largest frame, header included, the server sends or
// accepts.
const MaxFrameSize = 64 << 20

// Where the fields a client writes or reads sit in the header. Every
// integer is little-endian.
const (
	offSize      = 48  // u32, header plus body
	offCommand   = 60  // u8, the frame's kind
	offClient    = 128 // u128, request and eviction: the client id
	offRequest   = 168 // u64, request: the request id
	offOperation = 176 // u8, request: the operation
	offSession   = 184 // u64, request: the session
	offCode      = 196 // u32, request: the command code of a non-replicated operation

	offReplyClient    = 160 // u128, reply: the client it answers
	offReplyRequest   = 200 // u64, reply: the request id it answers
	offReplyOperation = 208 // u8, reply: the operation it answers
	offReplyStatus    = 216 // u32, reply: 0, or the error code of a request refused before it was committed

	offEvictVersion    = 144 // u32, eviction: newest protocol version the server speaks
	offEvictVersionMin = 148 // u32, eviction: oldest protocol version the server speaks
	offEvictReason     = 255 // u8, eviction: why
)

// Command is the kind of a frame.
type Command uint8

// The frame kinds a client sends or meets.
const (
	CommandRequest  Command = 5
	CommandReply    Command = 8
	CommandEviction Command = 13
)

// Operation says how the server handles a request: the register (login)
// and logout, a non-replicated read (whose command code travels in the
// header), or a replicated change.
type Operation uint8

// The operations of the calls a transport makes.
const (
	OpRegister            Operation = 1
	OpNonReplicated       Operation = 2
	OpLogout              Operation = 3
	opInternalFirst       Operation = 64 // the server's own forms of metadata changes, 64..127
	OpCreateStream        Operation = 128
	OpDeleteStream        Operation = 130
	OpCreateTopic         Operation = 132
	OpCreateConsumerGroup Operation = 139
	OpJoinConsumerGroup   Operation = 148
	OpLeaveConsumerGroup  Operation = 149
	OpSendMessages        Operation = 160
	OpStoreConsumerOffset Operation = 161
)

// Command codes, the same numbers as Iggy's 0.8 protocol.
const (
	CodePing               uint32 = 1
	CodeClusterMetadata    uint32 = 12
	CodeLoginRegister      uint32 = 40
	CodeLoginRegisterToken uint32 = 45
	CodePollMessages       uint32 = 100
	CodeSendMessages       uint32 = 101
	CodeGetOffset          uint32 = 120
	CodeStoreOffset        uint32 = 121
	CodeGetStream          uint32 = 200
	CodeCreateStream       uint32 = 202
	CodeDeleteStream       uint32 = 203
	CodeGetTopic           uint32 = 300
	CodeCreateTopic        uint32 = 302
	CodeGetGroup           uint32 = 600
	CodeCreateGroup        uint32 = 602
	CodeJoinGroup          uint32 = 604
	CodeLeaveGroup         uint32 = 605
)

// OperationOf is the operation a command code travels as.
func OperationOf(code uint32) Operation {
	switch code {
	case CodeLoginRegister, CodeLoginRegisterToken:
		return OpRegister
	case CodeSendMessages:
		return OpSendMessages
	case CodeStoreOffset:
		return OpStoreConsumerOffset
	case CodeCreateStream:
		return OpCreateStream
	case CodeDeleteStream:
		return OpDeleteStream
	case CodeCreateTopic:
		return OpCreateTopic
	case CodeCreateGroup:
		return OpCreateConsumerGroup
	case CodeJoinGroup:
		return OpJoinConsumerGroup
	case CodeLeaveGroup:
		return OpLeaveConsumerGroup
	}
	return OpNonReplicated
}

// Partition reports whether op replicates in its partition's own group
// (send, offset store): at least once, and not deduplicated by request id,
// so a request of it whose outcome is unknown must not be replayed.
func (op Operation) Partition() bool { return op >= OpSendMessages }

// Replayable reports whether a request of op the server did not commit yet
// may be sent again as it is: a read changes nothing, and the server's
// client table answers a replayed metadata change from its cache.
func (op Operation) Replayable() bool { return !op.Partition() }

// resultFramed reports whether a committed reply of op starts with a result
// section (the metadata changes and the offset store); a send and the
// non-replicated reads answer with their body alone.
func resultFramed(op Operation) bool {
	return op >= opInternalFirst && op <= OpLeaveConsumerGroup || op == OpStoreConsumerOffset
}

// ClientID identifies a connection's client to the server's session table;
// a fresh random one per connection.
type ClientID struct{ Lo, Hi uint64 }

// String renders c as the 32 hex digits of the u128.
func (c ClientID) String() string { return fmt.Sprintf("%016x%016x", c.Hi, c.Lo) }

// Client is the connection's client id, which every reply must name.
func (s *Session) Client() ClientID { return s.client }

// Session is the request bookkeeping of one connection: the client id, the
// session the register bound, and the request counter. It is not safe for
// concurrent use; the connection serializes its requests.
type Session struct {
	client  ClientID
	session uint64
	next    uint64 // the next request id of a replicated metadata change
}

// NewSession starts the bookkeeping of a connection with client id c, which
// must not be zero.
func NewSession(c ClientID) *Session { return &Session{client: c, next: 1} }

// Bound reports whether a register has bound a session.
func (s *Session) Bound() bool { return s.session != 0 }

// Bind records the session a register reply named.
func (s *Session) Bind(session uint64) error {
	if session == 0 {
		return errors.New("vsr: the register reply names session 0")
	}
	s.session = session
	return nil
}

// ErrNotLoggedIn reports a replicated request before the register bound a
// session; nothing was sent.
var ErrNotLoggedIn = errors.New("vsr: request before login")

// Stamp writes the header of a request of command code into frame, whose
// first HeaderSize bytes are reserved for it and whose rest is the body,
// and returns the request id the reply must echo.
//
// The register travels as request 0 without a session. A replicated
// metadata change takes the next request id, which the server's client
// table deduplicates on. A non-replicated read and a partition operation
// (send, offset store) carry the current one without taking it: the server
// records no request id of theirs, so two different sends share an id and
// a replay of one is not recognised (see Operation.Partition).
func (s *Session) Stamp(frame []byte, code uint32) (uint64, error) {
	if len(frame) < HeaderSize || len(frame) > MaxFrameSize {
		return 0, fmt.Errorf("vsr: a request frame of %d bytes, want %d..%d", len(frame), HeaderSize, MaxFrameSize)
	}
	op := OperationOf(code)
	var request, session uint64
	switch {
	case op == OpRegister:
	case op == OpNonReplicated:
		request, session = s.next, s.session
	default:
		if !s.Bound() {
			return 0, ErrNotLoggedIn
		}
		session, request = s.session, s.next
		if !op.Partition() {
			s.next++
		}
	}
	h := frame[:HeaderSize]
	clear(h)
	binary.LittleEndian.PutUint32(h[offSize:], uint32(len(frame)))
	h[offCommand] = byte(CommandRequest)
	binary.LittleEndian.PutUint64(h[offClient:], s.client.Lo)
	binary.LittleEndian.PutUint64(h[offClient+8:], s.client.Hi)
	binary.LittleEndian.PutUint64(h[offRequest:], request)
	h[offOperation] = byte(op)
	binary.LittleEndian.PutUint64(h[offSession:], session)
	if op == OpNonReplicated {
		binary.LittleEndian.PutUint32(h[offCode:], code)
	}
	return request, nil
}

// FrameSize is the frame size a header states, header included.
func FrameSize(h *[HeaderSize]byte) uint32 { return binary.LittleEndian.Uint32(h[offSize:]) }
