package iggytest

import (
	"encoding/binary"
	"errors"

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
// u32 count, count 16-byte index entries (the u32 at +4 is the cumulative
// end of each message), then the messages: a 64-byte header, the payload,
// the user headers. The batch lands on one partition with consecutive
// offsets and one timestamp.
func (s *Server) send(p []byte) ([]byte, error) {
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
	if uint64(count)*(indexEntrySize+messageHeaderSize) > uint64(len(r.b)) {
		return nil, fail(StatusInvalidMessagesSize, "the batch is shorter than its message count needs")
	}
	index := r.take(int(count) * indexEntrySize)
	body := r.b
	if err := checkIdents(sid, tid); err != nil {
		return nil, err
	}
	_, t, err := s.resolveTopicLocked(sid, tid)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, fail(StatusInvalidMessagesCount, "a batch needs at least one message")
	}
	recs, err := parseBatch(index, body, int(count))
	if err != nil {
		return nil, err
	}
	part, err := placeBatch(t, pkind, pval)
	if err != nil {
		return nil, err
	}
	if _, err := t.Append(part, recs); err != nil {
		return nil, err
	}
	return nil, nil
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

// parseBatch validates the index and the messages and returns them as
// records; payloads and header values alias body, which the log engine copies.
func parseBatch(index, body []byte, count int) ([]logstore.Record, error) {
	recs := make([]logstore.Record, count)
	pos := 0
	for i := range recs {
		if len(body)-pos < messageHeaderSize {
			return nil, fail(StatusInvalidMessagesSize, "message header cut short")
		}
		h := body[pos : pos+messageHeaderSize]
		headersLen := binary.LittleEndian.Uint32(h[48:52])
		payloadLen := binary.LittleEndian.Uint32(h[52:56])
		switch {
		case binary.LittleEndian.Uint64(h[56:64]) != 0:
			return nil, fail(StatusInvalidReservedField, "the reserved header field must be 0")
		case payloadLen == 0:
			return nil, fail(StatusInvalidMessagePayloadLength, "empty message payload")
		case payloadLen > maxPayload:
			return nil, fail(StatusTooBigMessagePayload, "message payload over 10 MB")
		case headersLen > maxUserHeaders:
			return nil, fail(StatusTooBigUserHeaders, "user headers over 100 KB")
		}
		end := pos + messageHeaderSize + int(payloadLen) + int(headersLen)
		if end > len(body) {
			return nil, fail(StatusInvalidMessagesSize, "message cut short")
		}
		if binary.LittleEndian.Uint32(index[i*indexEntrySize+4:]) != uint32(end) {
			return nil, fail(StatusInvalidMessagesSize, "index position does not match the message sizes")
		}
		payload := body[pos+messageHeaderSize : pos+messageHeaderSize+int(payloadLen)]
		headers, err := parseUserHeaders(body[pos+messageHeaderSize+int(payloadLen) : end])
		if err != nil {
			return nil, err
		}
		recs[i] = logstore.Record{
			ID:              [16]byte(h[8:24]),
			OriginTimestamp: binary.LittleEndian.Uint64(h[40:48]),
			Headers:         headers,
			Payload:         payload,
		}
		pos = end
	}
	if pos != len(body) {
		return nil, fail(StatusInvalidMessagesSize, "bytes after the last message")
	}
	return recs, nil
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
