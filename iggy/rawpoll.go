package iggy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggy/internal/vsr"
	"github.com/lasergo/laser/runtime"
)

// The subscription polls with a codec of its own rather than the SDK's
// PollMessages, on the SDK client's socket and under the SDK client's
// request mutex. Why: the SDK grows a slice of messages and allocates a
// header per message, which a consumer then converts once more; polling is
// the hot path, and decoding the reply straight into runtime records halves
// what a poll allocates. The exchange is the one the SDK makes (Iggy's
// binary protocol, command 100; see ../shared/spec/iggy-go-sdk.md §3), and a
// link whose SDK layout is not recognised polls through the SDK as before.

const (
	pollCommand = 100
	// messageHeaderSize is the fixed header before each polled message.
	messageHeaderSize = iggcon.MessageHeaderSize
	// pollTailSize is what a poll request holds after the consumer, stream
	// and topic: partition flag and id, strategy kind and value, count,
	// auto-commit flag.
	pollTailSize = 1 + 4 + 1 + 8 + 4 + 1
	// maxPollReply bounds the reply length a poll accepts; a longer one
	// means the stream is out of step.
	maxPollReply = 1 << 30
	// maxRecordReply is the largest reply of one record Iggy can send: its
	// header, a payload of the server's maximum and room for its user
	// headers. A poll always accepts one record of that size.
	maxRecordReply = 64 + messageHeaderSize + iggcon.MaxPayloadSize + 1<<20
)

// replyTooLarge reports a poll reply longer than the caller's bound; the
// reply was read off the socket and dropped, so the link stays in step.
type replyTooLarge struct{ n uint32 }

func (e *replyTooLarge) Error() string {
	return fmt.Sprintf("iggy: poll reply of %d bytes over the bound", e.n)
}

// errMalformedReply reports a poll reply that does not parse: a bug in the
// server or a stream out of step.
var errMalformedReply = errors.New("iggy: malformed poll reply")

// pollRequest is one subscription's PollMessages request: the frame header
// (the 0.8 framing's 8 bytes, or the room for VSR's, stamped when sent),
// consumer, stream and topic are written once; build adds the rest.
type pollRequest struct{ buf []byte }

func newPollRequest(consumer iggcon.Consumer, stream, topic iggcon.Identifier, proto protocol) (pollRequest, error) {
	c, err := consumer.MarshalBinary()
	if err != nil {
		return pollRequest{}, err
	}
	head := 8
	if proto == protocolVSR {
		head = vsr.HeaderSize
	}
	b := make([]byte, head, head+len(c)+2+stream.Length+2+topic.Length+pollTailSize)
	b = append(b, c...)
	if b, err = stream.AppendBinary(b); err != nil {
		return pollRequest{}, err
	}
	if b, err = topic.AppendBinary(b); err != nil {
		return pollRequest{}, err
	}
	b = b[:len(b)+pollTailSize]
	if proto != protocolVSR {
		// The length counts the command code and the payload.
		binary.LittleEndian.PutUint32(b[0:4], uint32(len(b)-4))
		binary.LittleEndian.PutUint32(b[4:8], pollCommand)
	}
	return pollRequest{buf: b}, nil
}

// build returns the request for up to count records of partition from
// strategy, without auto-commit, in a buffer of its own: a call abandoned
// on a timeout may still be writing the last one.
func (r pollRequest) build(partition uint32, strategy iggcon.PollingStrategy, count uint32) []byte {
	b := append([]byte(nil), r.buf...)
	t := b[len(b)-pollTailSize:]
	t[0] = 1
	binary.LittleEndian.PutUint32(t[1:5], partition)
	t[5] = byte(strategy.Kind)
	binary.LittleEndian.PutUint64(t[6:14], strategy.Value)
	binary.LittleEndian.PutUint32(t[14:18], count)
	t[18] = 0
	return b
}

// exchange writes req and reads the reply's payload, holding mu (the SDK
// client's request mutex) throughout so no SDK call shares the socket
// meanwhile. A non-zero status comes back as the SDK's error for its code;
// an empty payload as nil; a payload longer than limit as *replyTooLarge,
// having been discarded from the socket without being held.
func exchange(conn net.Conn, mu *sync.Mutex, req []byte, limit int) ([]byte, error) {
	mu.Lock()
	defer mu.Unlock()
	for written := 0; written < len(req); {
		n, err := conn.Write(req[written:])
		if err != nil {
			return nil, err
		}
		written += n
	}
	var head [8]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return nil, err
	}
	if status := binary.LittleEndian.Uint32(head[0:4]); status != 0 {
		return nil, ierror.FromCode(ierror.Code(status))
	}
	n := binary.LittleEndian.Uint32(head[4:8])
	if n <= 1 { // the SDK reads a length of 0 or 1 as no payload
		return nil, nil
	}
	if n > maxPollReply {
		return nil, fmt.Errorf("%w: reply of %d bytes", ErrConnectionLost, n)
	}
	if int64(n) > int64(limit) {
		if _, err := io.CopyN(io.Discard, conn, int64(n)); err != nil {
			return nil, err
		}
		return nil, &replyTooLarge{n: n}
	}
	reply := make([]byte, n)
	if _, err := io.ReadFull(conn, reply); err != nil {
		return nil, err
	}
	return reply, nil
}

// polledPartition is what a poll reply says besides its records.
type polledPartition struct {
	partitionID   uint32
	currentOffset uint64
	messages      int // messages in the reply, the skipped ones included
}

// decodePoll turns a poll reply of partition p into records appended to
// out: those at or past offset from, at most limit in all. Payloads and
// header values alias reply; header keys are shared across the batch (see
// recordBuilder). It returns the offset after the last record taken (from when
// none was). The reply is
//
//	u32 partition id, u64 current offset, u32 count,
//	then per message: 64-byte header, payload, user headers.
//
// An empty reply is partition 0 at offset 0 with no messages, as the SDK
// reads it.
func (t *Transport) decodePoll(out []runtime.Incoming, p uint32, reply []byte, from uint64, limit int) ([]runtime.Incoming, uint64, polledPartition, error) {
	next := from
	var pp polledPartition
	if len(reply) == 0 {
		return out, next, pp, nil
	}
	if len(reply) < 16 {
		return out, next, pp, fmt.Errorf("%w: %d bytes", errMalformedReply, len(reply))
	}
	pp.partitionID = binary.LittleEndian.Uint32(reply[0:4])
	pp.currentOffset = binary.LittleEndian.Uint64(reply[4:12])
	count := int(binary.LittleEndian.Uint32(reply[12:16]))
	b := reply[16:]
	if count == 0 || len(b) == 0 {
		return out, next, pp, nil
	}
	// A message takes at least its header and one byte, which bounds what
	// a lying count can make us allocate.
	count = min(count, len(b)/(messageHeaderSize+1), limit-len(out))
	if count <= 0 {
		return out, next, pp, nil
	}
	if out == nil {
		out = make([]runtime.Incoming, 0, count)
	}
	rb := recordBuilder{t: t, partition: p}
	for len(b) > 0 && len(out) < limit {
		if len(b) < messageHeaderSize {
			return out, next, pp, fmt.Errorf("%w: %d bytes left, a message header takes %d", errMalformedReply, len(b), messageHeaderSize)
		}
		h := b[:messageHeaderSize]
		offset := binary.LittleEndian.Uint64(h[24:32])
		timestamp := binary.LittleEndian.Uint64(h[32:40])
		headersLen := int(binary.LittleEndian.Uint32(h[48:52]))
		payloadLen := int(binary.LittleEndian.Uint32(h[52:56]))
		b = b[messageHeaderSize:]
		if payloadLen > len(b) || headersLen > len(b)-payloadLen {
			return out, next, pp, fmt.Errorf("%w: message at offset %d claims %d payload and %d header bytes, %d left", errMalformedReply, offset, payloadLen, headersLen, len(b))
		}
		payload := b[:payloadLen:payloadLen]
		userHeaders := b[payloadLen : payloadLen+headersLen]
		b = b[payloadLen+headersLen:]
		pp.messages++
		if offset < from {
			continue
		}
		out = rb.add(out, offset, timestamp, payload, userHeaders)
		next = offset + 1
	}
	return out, next, pp, nil
}

// decodeVSRPoll is decodePoll for a reply in the VSR framing, whose
// messages come in batches (see vsr.PollReader); records alias reply as
// decodePoll's do. A reply that does not parse, or whose message checksum
// does not match, is an error wrapping errMalformedReply, and none of its
// records are kept by the caller.
func (t *Transport) decodeVSRPoll(out []runtime.Incoming, p uint32, reply []byte, from uint64, limit int) ([]runtime.Incoming, uint64, polledPartition, error) {
	next := from
	r, head, err := vsr.NewPollReader(reply)
	pp := polledPartition{partitionID: head.Partition, currentOffset: head.CurrentOffset}
	if err != nil {
		return out, next, pp, fmt.Errorf("%w: %w", errMalformedReply, err)
	}
	// A message takes at least its frame header, which bounds what a
	// lying count can make us allocate.
	if n := min(int(head.Count), len(reply)/vsr.MessageHeaderSize, limit-len(out)); out == nil && n > 0 {
		out = make([]runtime.Incoming, 0, n)
	}
	rb := recordBuilder{t: t, partition: p}
	for len(out) < limit {
		m, ok, err := r.Next()
		if err != nil {
			return out, next, pp, fmt.Errorf("%w: %w", errMalformedReply, err)
		}
		if !ok {
			break
		}
		pp.messages++
		if m.Offset < from {
			continue
		}
		out = rb.add(out, m.Offset, m.Timestamp, m.Payload, m.Headers)
		next = m.Offset + 1
	}
	return out, next, pp, nil
}
