package iggytest

import (
	"bytes"
	"math"
	"slices"

	"github.com/lasergo/laser/internal/logstore"
)

// stream is one Iggy stream, backed by a logstore.Log.
type stream struct {
	id        uint32
	name      string
	createdAt uint64
	log       *logstore.Log
	// settings holds what CreateTopic was given that the log engine does not keep,
	// by topic id.
	settings map[uint32]topicSettings
	// options are the VSR framing's stream options, echoed as sent.
	options []byte
}

// resolveStreamLocked finds a stream by id or name; a miss is
// StreamIdNotFound or StreamNameNotFound.
func (s *Server) resolveStreamLocked(id ident) (*stream, error) {
	if st := s.lookupStreamLocked(id); st != nil {
		return st, nil
	}
	if id.numeric {
		return nil, fail(StatusStreamIDNotFound, "stream "+id.String()+" not found")
	}
	return nil, fail(StatusStreamNameNotFound, "stream "+id.String()+" not found")
}

func (s *Server) lookupStreamLocked(id ident) *stream {
	if id.numeric {
		return s.streams[id.id]
	}
	return s.streamNames[id.name]
}

// getStream (code 200): a missing stream is an empty OK.
func (s *Server) getStream(p []byte, f framing) ([]byte, error) {
	r := reader{b: p}
	id := r.ident()
	if err := r.done(); err != nil {
		return nil, err
	}
	if err := checkIdents(id); err != nil {
		return nil, err
	}
	st := s.lookupStreamLocked(id)
	if st == nil {
		return nil, nil
	}
	topics := st.log.Topics()
	out := st.appendHeader(nil, topics, f)
	for _, t := range topics {
		out = st.appendTopicHeader(out, t, f)
	}
	return out, nil
}

// getStreams (code 201): every stream header in id order.
func (s *Server) getStreams(p []byte, f framing) ([]byte, error) {
	r := reader{b: p}
	if err := r.done(); err != nil {
		return nil, err
	}
	var out []byte
	for _, st := range s.sortedStreamsLocked() {
		out = st.appendHeader(out, st.log.Topics(), f)
	}
	return out, nil
}

func (s *Server) sortedStreamsLocked() []*stream {
	out := make([]*stream, 0, len(s.streams))
	for _, st := range s.streams {
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b *stream) int { return int(a.id) - int(b.id) })
	return out
}

// createStream (code 202): u8-prefixed name, then in the VSR framing the
// options (user-header entries with string keys). Ids count from 0 in
// creation order and are not reused.
func (s *Server) createStream(p []byte, f framing) ([]byte, error) {
	r := reader{b: p}
	name := r.name()
	var opts []byte
	if f == framingVSR && !r.bad {
		opts, r.b = r.b, nil
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	if name == "" {
		return nil, fail(StatusInvalidStreamName, "empty stream name")
	}
	if _, ok := s.streamNames[name]; ok {
		return nil, fail(StatusStreamNameAlreadyExists, "stream "+name+" already exists")
	}
	if s.nextStream == math.MaxUint32 {
		return nil, fail(StatusError, "stream ids exhausted")
	}
	st := &stream{
		id:        s.nextStream,
		name:      name,
		createdAt: s.now(),
		log:       logstore.New(name, logstore.WithStreamID(s.nextStream), logstore.WithClock(s.cfg.clock)),
		settings:  make(map[uint32]topicSettings),
		options:   bytes.Clone(opts),
	}
	s.nextStream++
	s.streams[st.id] = st
	s.streamNames[name] = st
	return st.appendHeader(nil, nil, f), nil
}

// deleteStream (code 203) removes a stream with its topics.
func (s *Server) deleteStream(p []byte) ([]byte, error) {
	st, err := s.streamRequest(p)
	if err != nil {
		return nil, err
	}
	for _, t := range st.log.Topics() {
		_ = st.log.DeleteTopic(t.Name()) // listed just now, under the server lock
	}
	delete(s.streams, st.id)
	delete(s.streamNames, st.name)
	return nil, nil
}

// appendHeader appends the stream header: u32 id, u64 created_at,
// u32 topics_count, u64 size_bytes, u64 messages_count, u8 name; in the VSR
// framing then the u32-prefixed options.
func (st *stream) appendHeader(b []byte, topics []*logstore.Topic, f framing) []byte {
	var size, msgs uint64
	for _, t := range topics {
		ts, tm := topicTotals(t)
		size += ts
		msgs += tm
	}
	b = putU32(b, st.id)
	b = putU64(b, st.createdAt)
	b = putU32(b, uint32(len(topics)))
	b = putU64(b, size)
	b = putU64(b, msgs)
	b = putName(b, st.name)
	if f == framingVSR {
		b = putOptions(b, st.options)
	}
	return b
}

// streamRequest reads a request that is only a stream identifier, and
// resolves it.
func (s *Server) streamRequest(p []byte) (*stream, error) {
	r := reader{b: p}
	id := r.ident()
	if err := r.done(); err != nil {
		return nil, err
	}
	if err := checkIdents(id); err != nil {
		return nil, err
	}
	return s.resolveStreamLocked(id)
}
