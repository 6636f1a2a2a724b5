package iggytest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"

	"github.com/lasergo/laser/internal/logstore"
	"github.com/lasergo/laser/wire"
)

// maxPartitions is Iggy's limit on a topic's partition count.
const maxPartitions = 1000

// topicSettings is what CreateTopic declares beyond the partition count;
// the test server echoes it and enforces none of it.
type topicSettings struct {
	compression uint8
	expiry      uint64
	maxSize     uint64
	replication uint8
	// options are the VSR framing's topic options, echoed as sent.
	options []byte
}

// applyOptions takes the settings the topic header reports from the VSR
// options Iggy defines for them: compression_algorithm ("none" or "gzip"),
// message_expiry and max_topic_size (u64, µs and bytes). Others, such as
// the reference SDK's consumer_offset_durability, are kept and echoed only.
func (set *topicSettings) applyOptions() {
	h, _ := wire.ParseHeaders(set.options) // checked by checkOptions
	for key, val := range h.All() {
		u64 := val.Kind == wire.HeaderKindUint64
		switch key {
		case "compression_algorithm":
			switch string(val.Data) {
			case "none":
				set.compression = 1
			case "gzip":
				set.compression = 2
			}
		case "message_expiry":
			if u64 {
				set.expiry = binary.LittleEndian.Uint64(val.Data)
			}
		case "max_topic_size":
			if u64 {
				set.maxSize = binary.LittleEndian.Uint64(val.Data)
			}
		}
	}
}

// resolveTopicLocked finds a topic by stream and topic id or name; a miss
// is the matching not-found status.
func (s *Server) resolveTopicLocked(sid, tid ident) (*stream, *logstore.Topic, error) {
	if err := checkIdents(sid, tid); err != nil {
		return nil, nil, err
	}
	st, err := s.resolveStreamLocked(sid)
	if err != nil {
		return nil, nil, err
	}
	if t := lookupTopic(st, tid); t != nil {
		return st, t, nil
	}
	if tid.numeric {
		return nil, nil, fail(StatusTopicIDNotFound, "topic "+tid.String()+" not found")
	}
	return nil, nil, fail(StatusTopicNameNotFound, "topic "+tid.String()+" not found")
}

func lookupTopic(st *stream, tid ident) *logstore.Topic {
	var t *logstore.Topic
	if tid.numeric {
		t, _ = st.log.TopicByID(tid.id)
	} else {
		t, _ = st.log.Topic(tid.name)
	}
	return t
}

// getTopic (code 300): a missing stream or topic is an empty OK.
func (s *Server) getTopic(p []byte, f framing) ([]byte, error) {
	r := reader{b: p}
	sid, tid := r.ident(), r.ident()
	if err := r.done(); err != nil {
		return nil, err
	}
	if err := checkIdents(sid, tid); err != nil {
		return nil, err
	}
	st := s.lookupStreamLocked(sid)
	if st == nil {
		return nil, nil
	}
	t := lookupTopic(st, tid)
	if t == nil {
		return nil, nil
	}
	return appendPartitions(st.appendTopicHeader(nil, t, f), t), nil
}

// getTopics (code 301): every topic header of a stream in id order; in the
// VSR framing after a u32 count, and a missing stream is an empty list, as
// Iggy 0.9 answers.
func (s *Server) getTopics(p []byte, f framing) ([]byte, error) {
	st, err := s.streamRequest(p)
	if f == framingVSR && isNotFound(err) {
		return putU32(nil, 0), nil
	}
	if err != nil {
		return nil, err
	}
	topics := st.log.Topics()
	var out []byte
	if f == framingVSR {
		out = putU32(out, uint32(len(topics)))
	}
	for _, t := range topics {
		out = st.appendTopicHeader(out, t, f)
	}
	return out, nil
}

// isNotFound reports whether err is a stream lookup's miss.
func isNotFound(err error) bool {
	st := statusOf(err)
	return err != nil && (st == StatusStreamIDNotFound || st == StatusStreamNameNotFound)
}

// createTopic (code 302): in the 0.8 framing stream, u32 partitions,
// u8 compression, u64 expiry (µs), u64 max size, u8 replication factor,
// u8 name; in the VSR framing stream, u32 partitions, u8 name and the
// options (user-header entries with string keys), which the server keeps
// and echoes but does not apply.
func (s *Server) createTopic(p []byte, f framing) ([]byte, error) {
	r := reader{b: p}
	sid := r.ident()
	partitions := r.u32()
	var set topicSettings
	var name string
	if f == framingVSR {
		set = topicSettings{compression: 1}
		name = r.name()
		if !r.bad {
			set.options, r.b = bytes.Clone(r.b), nil
		}
	} else {
		set = topicSettings{compression: r.u8(), expiry: r.u64(), maxSize: r.u64(), replication: r.u8()}
		name = r.name()
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	if err := checkIdents(sid); err != nil {
		return nil, err
	}
	if err := checkOptions(set.options); err != nil {
		return nil, err
	}
	set.applyOptions()
	st, err := s.resolveStreamLocked(sid)
	if err != nil {
		return nil, err
	}
	switch {
	case name == "":
		return nil, fail(StatusInvalidTopicName, "empty topic name")
	case set.compression != 1 && set.compression != 2:
		// Iggy rejects compression 0 although the SDK's own samples send it.
		return nil, fail(StatusInvalidCommand, "compression algorithm must be 1 (none) or 2 (gzip)")
	case partitions > maxPartitions:
		return nil, fail(StatusTooManyPartitions, "too many partitions")
	}
	// 0 means "the server default": never expire, unlimited size, one replica.
	if set.expiry == 0 {
		set.expiry = math.MaxUint64
	}
	if set.maxSize == 0 {
		set.maxSize = math.MaxUint64
	}
	if set.replication == 0 {
		set.replication = 1
	}
	t, err := st.log.CreateTopic(name, partitions)
	if errors.Is(err, logstore.ErrBadPartitions) {
		return nil, fail(StatusInvalidPartitionsCount, err.Error())
	}
	if err != nil {
		return nil, err
	}
	st.settings[t.ID()] = set
	return appendPartitions(st.appendTopicHeader(nil, t, f), t), nil
}

// deleteTopic (code 303) removes a topic with its records, groups and
// offsets.
func (s *Server) deleteTopic(p []byte) ([]byte, error) {
	r := reader{b: p}
	sid, tid := r.ident(), r.ident()
	if err := r.done(); err != nil {
		return nil, err
	}
	st, t, err := s.resolveTopicLocked(sid, tid)
	if err != nil {
		return nil, err
	}
	if err := st.log.DeleteTopic(t.Name()); err != nil {
		return nil, err
	}
	delete(st.settings, t.ID())
	return nil, nil
}

// createPartitions (code 402): stream, topic, u32 count to add. Every
// consumer group of the topic rebalances.
func (s *Server) createPartitions(p []byte) ([]byte, error) {
	r := reader{b: p}
	sid, tid := r.ident(), r.ident()
	n := r.u32()
	if err := r.done(); err != nil {
		return nil, err
	}
	_, t, err := s.resolveTopicLocked(sid, tid)
	if err != nil {
		return nil, err
	}
	if err := t.AddPartitions(n); err != nil {
		if errors.Is(err, logstore.ErrBadPartitions) {
			return nil, fail(StatusTooManyPartitions, err.Error())
		}
		return nil, err
	}
	return nil, nil
}

// appendTopicHeader appends the topic header: u32 id, u64 created_at,
// u32 partitions_count, u64 message_expiry, u8 compression,
// u64 max_topic_size, u8 replication_factor (0.8 framing only),
// u64 size_bytes, u64 messages_count, u8 name; in the VSR framing then the
// u32-prefixed options and derived options.
func (st *stream) appendTopicHeader(b []byte, t *logstore.Topic, f framing) []byte {
	set, ok := st.settings[t.ID()]
	if !ok {
		set = topicSettings{compression: 1, expiry: math.MaxUint64, maxSize: math.MaxUint64, replication: 1}
	}
	size, msgs := topicTotals(t)
	b = putU32(b, t.ID())
	b = putU64(b, t.CreatedAt())
	b = putU32(b, t.Partitions())
	b = putU64(b, set.expiry)
	b = putU8(b, set.compression)
	b = putU64(b, set.maxSize)
	if f == framingLegacy {
		b = putU8(b, set.replication)
	}
	b = putU64(b, size)
	b = putU64(b, msgs)
	b = putName(b, t.Name())
	if f == framingVSR {
		b = putOptions(b, set.options)
		b = putOptions(b, set.derivedOptions())
	}
	return b
}

// derivedOptions are the settings in effect, as options: what Iggy 0.9
// reports beside the options a topic was created with.
func (set topicSettings) derivedOptions() []byte {
	compression := "none"
	if set.compression == 2 {
		compression = "gzip"
	}
	b := appendOption(nil, "compression_algorithm", wire.HeaderKindString, []byte(compression))
	b = appendOption(b, "max_topic_size", wire.HeaderKindUint64, binary.LittleEndian.AppendUint64(nil, set.maxSize))
	return appendOption(b, "message_expiry", wire.HeaderKindUint64, binary.LittleEndian.AppendUint64(nil, set.expiry))
}

// appendOption appends an option entry with a string key.
func appendOption(b []byte, key string, kind wire.HeaderKind, val []byte) []byte {
	b = append(b, byte(wire.HeaderKindString))
	b = putU32(b, uint32(len(key)))
	b = append(b, key...)
	b = append(b, byte(kind))
	b = putU32(b, uint32(len(val)))
	return append(b, val...)
}

// appendPartitions appends one 40-byte record per partition: u32 id,
// u64 created_at, u32 segments_count, u64 current_offset, u64 size_bytes,
// u64 messages_count.
func appendPartitions(b []byte, t *logstore.Topic) []byte {
	n := t.Partitions()
	for p := uint32(0); p < n; p++ {
		info, err := t.PartitionInfo(p)
		if err != nil {
			break // deleted concurrently by a direct user of the log engine; stop at what exists
		}
		b = putU32(b, info.ID)
		b = putU64(b, info.CreatedAt)
		b = putU32(b, 1)
		b = putU64(b, info.CurrentOffset)
		b = putU64(b, info.SizeBytes)
		b = putU64(b, info.Messages)
	}
	return b
}

// topicTotals sums the partitions' sizes and message counts.
func topicTotals(t *logstore.Topic) (size, msgs uint64) {
	n := t.Partitions()
	for p := uint32(0); p < n; p++ {
		info, err := t.PartitionInfo(p)
		if err != nil {
			break
		}
		size += info.SizeBytes
		msgs += info.Messages
	}
	return size, msgs
}
