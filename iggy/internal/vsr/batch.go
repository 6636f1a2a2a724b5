package vsr

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
)

// The message batch both directions carry: a 256-byte batch header, then
// per message a 48-byte frame header, the payload and the user headers.
const (
	BatchHeaderSize   = 256
	MessageHeaderSize = 48

	// batch header fields
	bhBaseOffset    = 8
	bhBaseTimestamp = 16
	bhOrigin        = 24
	bhLength        = 32
	bhChecksum      = 40
	bhCount         = 48

	// message frame header fields
	mhID          = 8
	mhOffsetDelta = 24
	mhTimeDelta   = 28
	mhHeadersLen  = 32
	mhPayloadLen  = 36
	mhReserved    = 40

	// partitioningByID is the send's partitioning kind naming a partition.
	partitioningByID = 2
)

// Outgoing is one message to send.
type Outgoing struct {
	ID      [16]byte
	Payload []byte
	Headers []byte // encoded user headers, or nil
}

// SendSize is the body size AppendSend writes for msgs with stream and
// topic identifiers of the given encoded lengths.
func SendSize(stream, topic int, msgs []Outgoing) int {
	n := 4 + stream + topic + 2 + 4 + 4 + BatchHeaderSize
	for i := range msgs {
		n += MessageHeaderSize + len(msgs[i].Payload) + len(msgs[i].Headers)
	}
	return n
}

// AppendSend appends the body of a send of msgs to one partition: the
// u32-prefixed metadata (stream and topic identifiers as encoded, the
// partitioning, the message count), then one batch. origin is the batch's
// origin timestamp (µs); each message's checksum is XXH3-64 of its frame
// after the checksum, and the batch's covers its header fields and the
// message checksums, as the server verifies them.
func AppendSend(b, stream, topic []byte, partition uint32, origin uint64, msgs []Outgoing) []byte {
	meta := len(b)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = append(b, stream...)
	b = append(b, topic...)
	b = append(b, partitioningByID, 4)
	b = binary.LittleEndian.AppendUint32(b, partition)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(msgs)))
	binary.LittleEndian.PutUint32(b[meta:], uint32(len(b)-meta-4))

	// The batch checksum hashes the header's partition, base offset and
	// base timestamp (all 0 from a client), origin, length and count,
	// then every message checksum, fed here as each message is written.
	length := uint64(BatchHeaderSize)
	for i := range msgs {
		length += uint64(MessageHeaderSize + len(msgs[i].Payload) + len(msgs[i].Headers))
	}
	sums := xxh3.New()
	var fields [44]byte
	binary.LittleEndian.PutUint64(fields[24:], origin)
	binary.LittleEndian.PutUint64(fields[32:], length)
	binary.LittleEndian.PutUint32(fields[40:], uint32(len(msgs)))
	_, _ = sums.Write(fields[:])

	head := len(b)
	var zero [BatchHeaderSize]byte
	b = append(b, zero[:]...)
	for i := range msgs {
		m := &msgs[i]
		start := len(b)
		b = binary.LittleEndian.AppendUint64(b, 0)
		b = append(b, m.ID[:]...)
		b = binary.LittleEndian.AppendUint32(b, uint32(i))
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Headers)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Payload)))
		b = binary.LittleEndian.AppendUint64(b, 0)
		b = append(b, m.Payload...)
		b = append(b, m.Headers...)
		binary.LittleEndian.PutUint64(b[start:], xxh3.Hash(b[start+8:]))
		_, _ = sums.Write(b[start : start+8])
	}
	h := b[head : head+BatchHeaderSize]
	binary.LittleEndian.PutUint64(h[bhOrigin:], origin)
	binary.LittleEndian.PutUint64(h[bhLength:], length)
	binary.LittleEndian.PutUint32(h[bhCount:], uint32(len(msgs)))
	binary.LittleEndian.PutUint64(h[bhChecksum:], sums.Sum64())
	return b
}

// Polled is what a poll reply says besides its messages.
type Polled struct {
	Partition     uint32
	CurrentOffset uint64
	Count         uint32 // messages the reply declares
}

// ResyncPartition is the partition id of an empty poll reply to a group
// member polling a partition it does not own.
const ResyncPartition = 0xFFFFFFFF

// Message is one polled message; Payload and Headers alias the reply.
type Message struct {
	Offset    uint64
	Timestamp uint64 // µs, when the server appended it
	ID        [16]byte
	Payload   []byte
	Headers   []byte
}

// PollReader walks the messages of a poll reply without copying them.
type PollReader struct {
	rest  []byte // batches not yet read
	batch []byte // the rest of the current batch's messages
	base  uint64 // the current batch's base offset
	stamp uint64 // the current batch's base timestamp
	seen  uint32
	want  uint32
}

// NewPollReader reads a poll reply's prefix (u32 partition, u64 current
// offset, u32 message count). An empty payload is an empty reply.
func NewPollReader(p []byte) (PollReader, Polled, error) {
	if len(p) == 0 {
		return PollReader{}, Polled{}, nil
	}
	if len(p) < 16 {
		return PollReader{}, Polled{}, fmt.Errorf("%w: a poll reply of %d bytes, its prefix takes 16", ErrMalformed, len(p))
	}
	pp := Polled{
		Partition:     binary.LittleEndian.Uint32(p[0:4]),
		CurrentOffset: binary.LittleEndian.Uint64(p[4:12]),
		Count:         binary.LittleEndian.Uint32(p[12:16]),
	}
	return PollReader{rest: p[16:], want: pp.Count}, pp, nil
}

// Next returns the next message; ok is false after the last one. A reply
// whose batches or frames do not add up, whose message count does not
// match the one declared, or whose message checksum does not match wraps
// ErrMalformed.
func (r *PollReader) Next() (m Message, ok bool, err error) {
	for len(r.batch) == 0 {
		if len(r.rest) == 0 {
			if r.seen != r.want {
				return Message{}, false, fmt.Errorf("%w: the reply declares %d messages and holds %d", ErrMalformed, r.want, r.seen)
			}
			return Message{}, false, nil
		}
		if len(r.rest) < BatchHeaderSize {
			return Message{}, false, fmt.Errorf("%w: %d bytes left, a batch header takes %d", ErrMalformed, len(r.rest), BatchHeaderSize)
		}
		n := binary.LittleEndian.Uint64(r.rest[bhLength:])
		if n < BatchHeaderSize || n > uint64(len(r.rest)) {
			return Message{}, false, fmt.Errorf("%w: a batch of %d bytes with %d left", ErrMalformed, n, len(r.rest))
		}
		r.base = binary.LittleEndian.Uint64(r.rest[bhBaseOffset:])
		r.stamp = binary.LittleEndian.Uint64(r.rest[bhBaseTimestamp:])
		r.batch = r.rest[BatchHeaderSize:n]
		r.rest = r.rest[n:]
	}
	f := r.batch
	if len(f) < MessageHeaderSize {
		return Message{}, false, fmt.Errorf("%w: %d bytes left in a batch, a message header takes %d", ErrMalformed, len(f), MessageHeaderSize)
	}
	hl := uint64(binary.LittleEndian.Uint32(f[mhHeadersLen:]))
	pl := uint64(binary.LittleEndian.Uint32(f[mhPayloadLen:]))
	end := MessageHeaderSize + pl + hl
	if end > uint64(len(f)) {
		return Message{}, false, fmt.Errorf("%w: a message of %d payload and %d header bytes with %d left in its batch", ErrMalformed, pl, hl, len(f)-MessageHeaderSize)
	}
	if binary.LittleEndian.Uint64(f[mhReserved:]) != 0 {
		return Message{}, false, fmt.Errorf("%w: a message header's reserved bytes are not zero", ErrMalformed)
	}
	m.Offset = r.base + uint64(binary.LittleEndian.Uint32(f[mhOffsetDelta:]))
	if sum := binary.LittleEndian.Uint64(f); sum != xxh3.Hash(f[8:end]) {
		return Message{}, false, fmt.Errorf("%w: the message at offset %d does not match its checksum", ErrMalformed, m.Offset)
	}
	m.Timestamp = r.stamp
	m.ID = [16]byte(f[mhID : mhID+16])
	m.Payload = f[MessageHeaderSize : MessageHeaderSize+pl : MessageHeaderSize+pl]
	m.Headers = f[MessageHeaderSize+pl : end : end]
	r.batch = f[end:]
	r.seen++
	return m, true, nil
}
