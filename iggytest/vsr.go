package iggytest

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
)

// The VSR framing (Iggy 0.9+): every frame opens with a 256-byte consensus
// header. Offsets are those of Iggy's request, reply and eviction headers.
const (
	vsrHeaderSize = 256

	vsrOffSize    = 48  // u32, the whole frame: header and body
	vsrOffCommand = 60  // u8
	vsrOffClient  = 128 // u128, the client's id, in every header kind here

	// Request header.
	vsrOffReqRequest   = 168 // u64 request number
	vsrOffReqOperation = 176 // u8
	vsrOffReqSession   = 184 // u64
	vsrOffReqCode      = 196 // u32 command code of a NonReplicated request

	// Reply header.
	vsrOffRepClient    = 160 // u128
	vsrOffRepRequest   = 200 // u64
	vsrOffRepOperation = 208 // u8
	vsrOffRepStatus    = 216 // u32

	// Eviction header.
	vsrOffEvictReason = 255 // u8
)

// Consensus commands a client sees.
const (
	vsrRequest  = 5
	vsrReply    = 8
	vsrEviction = 13
)

// Operations a client may send.
const (
	opRegister      = 1
	opNonReplicated = 2
	opLogout        = 3
)

// Eviction reasons the server sends.
const (
	evictNoSession               = 1
	evictInvalidRequestOperation = 4
	evictInvalidRequestBodySize  = 6
	evictInvalidCredentials      = 9
	evictInvalidToken            = 10
	evictMalformedLogin          = 15
)

// opCodes maps each replicated operation to its command code; the handlers
// are keyed by command code, as in the 0.8 framing.
var opCodes = map[uint8]uint32{
	opLogout: CmdLogout,
	128:      CmdCreateStream,
	129:      CmdUpdateStream,
	130:      CmdDeleteStream,
	131:      cmdPurgeStream,
	132:      CmdCreateTopic,
	133:      CmdUpdateTopic,
	134:      CmdDeleteTopic,
	135:      cmdPurgeTopic,
	136:      CmdCreatePartitions,
	137:      CmdDeletePartitions,
	138:      cmdDeleteSegments,
	139:      CmdCreateConsumerGroup,
	140:      CmdDeleteConsumerGroup,
	141:      cmdCreateUser,
	142:      cmdUpdateUser,
	143:      cmdDeleteUser,
	144:      cmdChangePassword,
	145:      cmdUpdatePermissions,
	146:      CmdCreateToken,
	147:      CmdDeleteToken,
	148:      CmdJoinConsumerGroup,
	149:      CmdLeaveConsumerGroup,
	160:      CmdSend,
	161:      CmdStoreOffset,
	162:      CmdDeleteOffset,
}

// resultFramed reports whether a reply to op opens with a result section
// (u32 count, then count {u32 index, u32 result} entries): Iggy's metadata
// operations and the stored-offset ones.
func resultFramed(op uint8) bool {
	return (op >= 128 && op <= 149) || op == 161 || op == 162
}

// framing is the wire format of a connection.
type framing int

const (
	framingLegacy framing = iota // Iggy 0.8: u32 length, u32 code, payload
	framingVSR                   // Iggy 0.9+: 256-byte consensus header, body
)

// detectFraming decides a connection's framing from its first four bytes.
// An 0.8 frame opens with its length, which counts the command code and so
// is at least 4; a VSR frame opens with the header checksum, which Iggy's
// clients leave zero (the server does not read it). Four zero bytes are
// thus VSR, anything else 0.8, and neither framing is misread.
func detectFraming(first [4]byte) framing {
	if first == [4]byte{} {
		return framingVSR
	}
	return framingLegacy
}

// vsrRequestHeader is what the server reads of a request header.
type vsrRequestHeader struct {
	size      uint32
	client    [16]byte
	request   uint64
	operation uint8
	session   uint64
	code      uint32
}

// errFrame is a frame the server cannot answer; the connection closes.
type errFrame struct {
	reason string
	evict  uint8 // an eviction reason to send before closing, or 0
}

func (e *errFrame) Error() string { return e.reason }

// parseVSRHeader validates a request header whose body may be at most
// limit bytes.
func parseVSRHeader(h []byte, limit uint32) (vsrRequestHeader, error) {
	var r vsrRequestHeader
	r.size = binary.LittleEndian.Uint32(h[vsrOffSize:])
	copy(r.client[:], h[vsrOffClient:vsrOffClient+16])
	r.request = binary.LittleEndian.Uint64(h[vsrOffReqRequest:])
	r.operation = h[vsrOffReqOperation]
	r.session = binary.LittleEndian.Uint64(h[vsrOffReqSession:])
	r.code = binary.LittleEndian.Uint32(h[vsrOffReqCode:])
	switch {
	case h[vsrOffCommand] != vsrRequest:
		return r, &errFrame{reason: "the frame is not a request (command " + strconv.Itoa(int(h[vsrOffCommand])) + ")"}
	case r.size < vsrHeaderSize:
		return r, &errFrame{reason: "the frame size " + strconv.FormatUint(uint64(r.size), 10) + " is smaller than its header"}
	case r.size-vsrHeaderSize > limit:
		return r, &errFrame{reason: "the frame size " + strconv.FormatUint(uint64(r.size), 10) + " is over the limit", evict: evictInvalidRequestBodySize}
	case r.client == [16]byte{}:
		return r, &errFrame{reason: "the request has no client id"}
	}
	switch r.operation {
	case opRegister:
		if r.session != 0 || r.request != 0 {
			return r, &errFrame{reason: "a register request must carry session 0 and request 0", evict: evictInvalidRequestOperation}
		}
		r.code = CmdLoginRegister
		return r, nil
	case opNonReplicated:
		return r, nil
	}
	code, ok := opCodes[r.operation]
	if !ok {
		return r, &errFrame{reason: "unknown operation " + strconv.Itoa(int(r.operation)), evict: evictInvalidRequestOperation}
	}
	if r.code != 0 {
		return r, &errFrame{reason: "a replicated request carries a command code in its reserved bytes", evict: evictInvalidRequestOperation}
	}
	if r.session == 0 || r.request == 0 {
		return r, &errFrame{reason: "a request after register needs a session and a request number", evict: evictNoSession}
	}
	r.code = code
	return r, nil
}

// serveVSR is the request loop of the VSR framing. A register binds the
// connection to a session; every later request must name it. A frame the
// server cannot answer closes the connection, after an eviction frame when
// Iggy sends one for it, and the reason is logged.
func (c *conn) serveVSR(f *frameIO) {
	hdr := make([]byte, vsrHeaderSize)
	var client [16]byte
	for {
		authed := f.awaitRequest()
		if _, err := io.ReadFull(f.r, hdr); err != nil {
			return
		}
		// Iggy's frame limit counts the header too.
		limit := uint32(maxFrame - vsrHeaderSize)
		if !authed {
			limit = maxLoginFrame
		}
		rh, err := parseVSRHeader(hdr, limit)
		if err == nil && client != [16]byte{} && rh.client != client {
			err = &errFrame{reason: "the client id changed on the connection"}
		}
		if err == nil && rh.operation != opRegister && rh.session != c.sessionID() {
			err = &errFrame{reason: "the request names session " + strconv.FormatUint(rh.session, 10) + ", not the connection's", evict: evictNoSession}
		}
		if err != nil {
			// Read a frame of an allowed size to its end first, so the
			// close is a clean FIN behind the eviction, not a reset that
			// can discard it before the client reads it.
			if rh.size >= vsrHeaderSize && rh.size-vsrHeaderSize <= limit {
				_, _ = f.readBody(rh.size - vsrHeaderSize)
			}
			c.closeVSR(f, rh.client, err)
			return
		}
		client = rh.client
		body, err := f.readBody(rh.size - vsrHeaderSize)
		if err != nil {
			return
		}
		c.vsrRequest = rh
		resp, status, ok := c.s.handle(c, rh.code, body)
		if !ok {
			return
		}
		var ef *errFrame
		if errors.As(c.vsrEvict, &ef) {
			c.vsrEvict = nil
			c.closeVSR(f, rh.client, ef)
			return
		}
		c.s.cfg.logger.Debug("iggytest: VSR request", "client", c.id, "operation", rh.operation, "code", rh.code, "request", rh.request, "bytes", len(body), "status", status, "reply_bytes", len(resp))
		if err := f.write(vsrReplyFrame(rh, resp, status)); err != nil {
			return
		}
	}
}

// closeVSR logs why the connection closes and sends the eviction frame the
// reason calls for.
func (c *conn) closeVSR(f *frameIO, client [16]byte, err error) {
	var ef *errFrame
	errors.As(err, &ef)
	c.s.cfg.logger.Warn("iggytest: bad VSR frame; closing the connection", "client", c.id, "reason", err.Error())
	if ef != nil && ef.evict != 0 && client != [16]byte{} {
		_ = f.write(net.Buffers{vsrEvictionFrame(client, ef.evict)})
	}
}

// vsrReplyFrame builds the reply to rh: the reply header, then the body.
// An error status of a result-framed operation travels in the result
// section, as Iggy's metadata replies carry a rejection; of any other
// operation in the header's status field, with no body.
func vsrReplyFrame(rh vsrRequestHeader, body []byte, status uint32) net.Buffers {
	if resultFramed(rh.operation) || (rh.operation == opRegister && status == 0) {
		section := make([]byte, 4, 12)
		if status != 0 {
			binary.LittleEndian.PutUint32(section, 1)
			section = binary.LittleEndian.AppendUint32(section, 0)
			section = binary.LittleEndian.AppendUint32(section, status)
			body, status = nil, 0
		}
		body = append(section, body...)
	}
	if status != 0 {
		body = nil
	}
	h := make([]byte, vsrHeaderSize)
	binary.LittleEndian.PutUint32(h[vsrOffSize:], uint32(vsrHeaderSize+len(body)))
	h[vsrOffCommand] = vsrReply
	copy(h[vsrOffRepClient:], rh.client[:])
	binary.LittleEndian.PutUint64(h[vsrOffRepRequest:], rh.request)
	h[vsrOffRepOperation] = rh.operation
	binary.LittleEndian.PutUint32(h[vsrOffRepStatus:], status)
	return net.Buffers{h, body}
}

// vsrEvictionFrame builds an eviction of client for reason.
func vsrEvictionFrame(client [16]byte, reason uint8) []byte {
	h := make([]byte, vsrHeaderSize)
	binary.LittleEndian.PutUint32(h[vsrOffSize:], vsrHeaderSize)
	h[vsrOffCommand] = vsrEviction
	copy(h[vsrOffClient:], client[:])
	h[vsrOffEvictReason] = reason
	return h
}
