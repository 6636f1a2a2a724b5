package iggytest

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/zeebo/xxh3"

	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/wire"
)

// Message limits of Iggy 0.8.
const (
	messageHeaderSize = 64
	maxPayload        = 10_000_000
	maxUserHeaders    = 100_000
	indexEntrySize    = 16
)

// Partitioning kinds of a send.
const (
	partitionBalanced = 1
	partitionByID     = 2
	partitionByKey    = 3
)

// send (code 101): u32 metadata length, stream, topic, partitioning,
// u32 count, then the messages in the framing's layout: in 0.8 count
// 16-byte index entries (the u32 at +4 is the cumulative end of each
// message), then each message's 64-byte header, payload and user headers;
// in VSR one batch (parseVSRBatch). The batch lands on one partition with
// consecutive offsets and one timestamp. The VSR framing answers a
// confirmation: u32 count (1), u32 stream, u32 topic, u32 partition,
// u64 base offset.
func (s *Server) send(p []byte, f framing) ([]byte, error) {
	r := reader{b: p}
	metaLen := r.u32()
	start := len(r.b)
	sid, tid := r.ident(), r.ident()
	pkind := r.u8()
	pval := r.take(int(r.u8()))
	count := r.u32()
	if r.bad || int(metaLen) != start-len(r.b) {
		return nil, errMalformed
	}
	var parse func() ([]logstore.Record, error)
	if f == framingVSR {
		if batchHeaderSize+uint64(count)*batchMessageSize > uint64(len(r.b)) {
			return nil, fail(StatusInvalidMessagesSize, "the batch is shorter than its message count needs")
		}
		batch := r.b
		parse = func() ([]logstore.Record, error) { return parseVSRBatch(batch, count) }
	} else {
		if uint64(count)*(indexEntrySize+messageHeaderSize) > uint64(len(r.b)) {
			return nil, fail(StatusInvalidMessagesSize, "the batch is shorter than its message count needs")
		}
		index := r.take(int(count) * indexEntrySize)
		body := r.b
		parse = func() ([]logstore.Record, error) { return parseBatch(index, body, int(count)) }
	}
	if err := checkIdents(sid, tid); err != nil {
		return nil, err
	}
	st, t, err := s.resolveTopicLocked(sid, tid)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, fail(StatusInvalidMessagesCount, "a batch needs at least one message")
	}
	recs, err := parse()
	if err != nil {
		return nil, err
	}
	part, err := placeBatch(t, pkind, pval)
	if err != nil {
		return nil, err
	}
	first, err := t.Append(part, recs)
	if err != nil {
		return nil, err
	}
	if f == framingLegacy {
		return nil, nil
	}
	out := putU32(nil, 1)
	out = putU32(out, st.id)
	out = putU32(out, t.ID())
	out = putU32(out, part)
	return putU64(out, first), nil
}

// placeBatch picks the partition: the topic's round robin, an explicit id,
// or xxHash32 of the messages key.
func placeBatch(t *logstore.Topic, kind uint8, val []byte) (uint32, error) {
	switch kind {
	case partitionBalanced:
		if len(val) != 0 {
			return 0, fail(StatusInvalidKeyValueLength, "balanced partitioning carries no value")
		}
		return t.NextBalanced(), nil
	case partitionByID:
		if len(val) != 4 {
			return 0, fail(StatusInvalidKeyValueLength, "a partition id is 4 bytes")
		}
		part := binary.LittleEndian.Uint32(val)
		if part >= t.Partitions() {
			return 0, fail(StatusPartitionNotFound, "partition not found")
		}
		return part, nil
	case partitionByKey:
		if len(val) == 0 {
			return 0, fail(StatusInvalidKeyValueLength, "a messages key is 1..255 bytes")
		}
		return t.PartitionForKey(val), nil
	}
	return 0, fail(StatusInvalidCommand, "unknown partitioning kind")
}

// parseBatch validates the index and the messages of an 0.8 send and
// returns them as records; payloads and header values alias body, which the
// log engine copies.
func parseBatch(index, body []byte, count int) ([]logstore.Record, error) {
	recs := make([]logstore.Record, count)
	pos := 0
	for i := range recs {
		if len(body)-pos < messageHeaderSize {
			return nil, fail(StatusInvalidMessagesSize, "message header cut short")
		}
		h := body[pos : pos+messageHeaderSize]
		if binary.LittleEndian.Uint64(h[56:64]) != 0 {
			return nil, fail(StatusInvalidReservedField, "the reserved header field must be 0")
		}
		rec, end, err := parseMessage(body, pos, messageHeaderSize, binary.LittleEndian.Uint32(h[48:52]), binary.LittleEndian.Uint32(h[52:56]))
		if err != nil {
			return nil, err
		}
		if binary.LittleEndian.Uint32(index[i*indexEntrySize+4:]) != uint32(end) {
			return nil, fail(StatusInvalidMessagesSize, "index position does not match the message sizes")
		}
		rec.ID = [16]byte(h[8:24])
		rec.OriginTimestamp = binary.LittleEndian.Uint64(h[40:48])
		recs[i] = rec
		pos = end
	}
	if pos != len(body) {
		return nil, fail(StatusInvalidMessagesSize, "bytes after the last message")
	}
	return recs, nil
}

// parseVSRBatch validates the batch of a VSR send: the 256-byte batch
// header (u64 origin timestamp at 24, u64 length at 32, u32 message count
// at 48, zeros from 52), then count messages of a 48-byte header (u128 id
// at 8, u32 offset delta, u32 origin timestamp delta, u32 user headers
// length, u32 payload length, u64 reserved at 40), payload and user headers.
// Each message's checksum (u64 at 0) must be XXH3-64 of the rest of its
// frame, and the batch's (u64 at 40) the hash sealBatch computes.
func parseVSRBatch(b []byte, count uint32) ([]logstore.Record, error) {
	h := b[:batchHeaderSize]
	switch {
	case binary.LittleEndian.Uint64(h[batchOffLength:]) != uint64(len(b)):
		return nil, fail(StatusInvalidMessagesSize, "the batch length does not match the request")
	case binary.LittleEndian.Uint32(h[batchOffCount:]) != count:
		return nil, fail(StatusInvalidMessagesCount, "the batch message count does not match the request")
	case !allZero(h[batchReservedFrom:]):
		return nil, fail(StatusInvalidReservedField, "the batch header's reserved bytes must be 0")
	}
	origin := binary.LittleEndian.Uint64(h[24:])
	sums := xxh3.New()
	writeBatchHeaderFields(sums, b)
	recs := make([]logstore.Record, count)
	pos := batchHeaderSize
	for i := range recs {
		if len(b)-pos < batchMessageSize {
			return nil, fail(StatusInvalidMessagesSize, "message header cut short")
		}
		m := b[pos : pos+batchMessageSize]
		if binary.LittleEndian.Uint64(m[40:48]) != 0 {
			return nil, fail(StatusInvalidReservedField, "the reserved header field must be 0")
		}
		rec, end, err := parseMessage(b, pos, batchMessageSize, binary.LittleEndian.Uint32(m[32:36]), binary.LittleEndian.Uint32(m[36:40]))
		if err != nil {
			return nil, err
		}
		if binary.LittleEndian.Uint64(m) != xxh3.Hash(b[pos+8:end]) {
			return nil, fail(StatusInvalidMessageChecksum, "the checksum of message "+strconv.Itoa(i)+" of the batch does not match it")
		}
		_, _ = sums.Write(m[:8])
		rec.ID = [16]byte(m[8:24])
		rec.OriginTimestamp = origin + uint64(binary.LittleEndian.Uint32(m[28:32]))
		recs[i] = rec
		pos = end
	}
	if pos != len(b) {
		return nil, fail(StatusInvalidMessagesSize, "bytes after the last message")
	}
	if binary.LittleEndian.Uint64(h[batchOffChecksum:]) != sums.Sum64() {
		return nil, fail(StatusInvalidMessageChecksum, "the batch checksum does not match its messages")
	}
	return recs, nil
}

// parseMessage checks the sizes of the message whose header of headerSize
// bytes starts at pos in body, and returns its payload and user headers as
// a record, with the end of the message.
func parseMessage(body []byte, pos, headerSize int, headersLen, payloadLen uint32) (logstore.Record, int, error) {
	switch {
	case payloadLen == 0:
		return logstore.Record{}, 0, fail(StatusInvalidMessagePayloadLength, "empty message payload")
	case payloadLen > maxPayload:
		return logstore.Record{}, 0, fail(StatusTooBigMessagePayload, "message payload over 10 MB")
	case headersLen > maxUserHeaders:
		return logstore.Record{}, 0, fail(StatusTooBigUserHeaders, "user headers over 100 KB")
	}
	start := pos + headerSize
	end := start + int(payloadLen) + int(headersLen)
	if end > len(body) {
		return logstore.Record{}, 0, fail(StatusInvalidMessagesSize, "message cut short")
	}
	headers, err := parseUserHeaders(body[start+int(payloadLen) : end])
	if err != nil {
		return logstore.Record{}, 0, err
	}
	return logstore.Record{Headers: headers, Payload: body[start : start+int(payloadLen)]}, end, nil
}

func allZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}

// parseUserHeaders checks user headers with wire.ParseHeaders, the rule
// every header reader of laser-go applies. The result views b, which the
// log engine copies. A real Iggy server stores headers unchecked (0.8.0
// checks only their total size), so what this server refuses would reach a
// real consumer; it refuses them anyway because its log holds checked
// headers, answering Iggy's InvalidHeaderKey or InvalidHeaderValue.
func parseUserHeaders(b []byte) (wire.EncodedHeaders, error) {
	h, err := wire.ParseHeaders(b)
	if he, ok := errors.AsType[*wire.HeaderError](err); ok && he.Key {
		return wire.EncodedHeaders{}, fail(StatusInvalidHeaderKey, err.Error())
	}
	if err != nil {
		return wire.EncodedHeaders{}, fail(StatusInvalidHeaderValue, err.Error())
	}
	return h, nil
}
