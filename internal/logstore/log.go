// Package logstore is the engine of the embedded log: one named stream of
// topics and partitions with Iggy's placement rules, consumer groups and
// stored offsets, and the runtime.Transport over it. Package embedlog is its
// public face (the transport); the in-process Iggy test server (iggytest)
// drives the engine directly.
//
// Everything lives in memory only: nothing is persisted, and a Log is not
// shared across processes or replicas. Error messages start with "embedlog:",
// the package users meet.
package logstore

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
)

// MaxPartitions is the most partitions a topic may have, Iggy's limit.
const MaxPartitions = 1000

// maxNameLen is Iggy's limit on stream, topic and group names.
const maxNameLen = 255

// Errors callers branch on. None of them is transient: each means the
// request names something that does not exist or is not allowed.
var (
	ErrNoTopic       = errors.New("embedlog: no such topic")
	ErrTopicExists   = errors.New("embedlog: topic already exists")
	ErrBadPartitions = errors.New("embedlog: partition count out of range")
	ErrNoPartition   = errors.New("embedlog: no such partition")
	ErrNoGroup       = errors.New("embedlog: no such consumer group")
	ErrGroupExists   = errors.New("embedlog: consumer group already exists")
	ErrNotMember     = errors.New("embedlog: not a member of the consumer group")
	ErrNotOwner      = fmt.Errorf("embedlog: member does not own the partition: %w", runtime.ErrPartitionLost)
	ErrInvalidOffset = errors.New("embedlog: invalid offset")
	ErrNoOffset      = errors.New("embedlog: no stored offset")
	ErrBadName       = errors.New("embedlog: invalid name")
	ErrBadCount      = errors.New("embedlog: invalid record count")
)

// entityError carries a precise message while matching its sentinel under
// errors.Is, so messages read naturally instead of "sentinel: detail".
type entityError struct {
	msg  string
	kind error
}

func (e *entityError) Error() string { return e.msg }
func (e *entityError) Unwrap() error { return e.kind }

func errorf(kind error, format string, args ...any) error {
	return &entityError{msg: fmt.Sprintf(format, args...), kind: kind}
}

// Option configures a Log.
type Option func(*config)

type config struct {
	clock             clock.Clock
	streamID          uint32
	defaultPartitions uint32
}

// WithClock sets the clock that stamps appended batches (Unix µs); the
// default is clock.System.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.clock = c
		}
	}
}

// WithStreamID sets the numeric stream id that TopicIDs reports; the default
// is 0, Iggy's first stream id.
func WithStreamID(id uint32) Option { return func(cfg *config) { cfg.streamID = id } }

// WithDefaultPartitions sets the partition count EnsureTopics uses when it is
// asked for 0 partitions; the default is 1 and values outside 1..1000 are
// ignored.
func WithDefaultPartitions(n uint32) Option {
	return func(cfg *config) {
		if n >= 1 && n <= MaxPartitions {
			cfg.defaultPartitions = n
		}
	}
}

// Log is one named stream of topics, safe for concurrent use.
type Log struct {
	stream string
	cfg    config

	// idPrefix and idSeq mint ids for records appended without one, as Iggy
	// assigns a fresh u128 to a message whose id is zero.
	idPrefix [8]byte
	idSeq    atomic.Uint64
	// memberSeq mints member ids for transport subscriptions.
	memberSeq atomic.Uint64

	mu          sync.RWMutex
	topics      map[string]*Topic
	byID        map[uint32]*Topic
	nextTopicID uint32
}

var _ runtime.Transport = (*Log)(nil)

// New returns an empty log holding the stream named stream.
func New(stream string, opts ...Option) *Log {
	l := &Log{
		stream: stream,
		cfg:    config{clock: clock.System{}, defaultPartitions: 1},
		topics: make(map[string]*Topic),
		byID:   make(map[uint32]*Topic),
	}
	for _, o := range opts {
		if o != nil {
			o(&l.cfg)
		}
	}
	_, _ = rand.Read(l.idPrefix[:]) // crypto/rand.Read never fails on supported platforms
	return l
}

// Stream returns the stream name.
func (l *Log) Stream() string { return l.stream }

// StreamID returns the numeric stream id.
func (l *Log) StreamID() uint32 { return l.cfg.streamID }

// CreateTopic creates a topic with 1..1000 partitions; topic ids count from 0
// in creation order and are never reused.
func (l *Log) CreateTopic(name string, partitions uint32) (*Topic, error) {
	if err := checkName("topic", name); err != nil {
		return nil, err
	}
	if partitions < 1 || partitions > MaxPartitions {
		return nil, errorf(ErrBadPartitions, "embedlog: topic %q: %d partitions, want 1..%d", name, partitions, MaxPartitions)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.topics[name]; ok {
		return nil, errorf(ErrTopicExists, "embedlog: topic %q already exists", name)
	}
	t := newTopic(l, l.nextTopicID, name, partitions)
	l.nextTopicID++
	l.topics[name] = t
	l.byID[t.id] = t
	return t, nil
}

// Topic returns the topic named name.
func (l *Log) Topic(name string) (*Topic, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	t, ok := l.topics[name]
	return t, ok
}

// TopicByID returns the topic with numeric id id.
func (l *Log) TopicByID(id uint32) (*Topic, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	t, ok := l.byID[id]
	return t, ok
}

// Topics returns every topic in id order.
func (l *Log) Topics() []*Topic {
	l.mu.RLock()
	out := make([]*Topic, 0, len(l.byID))
	for _, t := range l.byID {
		out = append(out, t)
	}
	l.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// DeleteTopic removes a topic with its records, groups and offsets; holders
// of the old *Topic and its subscriptions get ErrNoTopic from then on.
func (l *Log) DeleteTopic(name string) error {
	l.mu.Lock()
	t, ok := l.topics[name]
	if ok {
		delete(l.topics, name)
		delete(l.byID, t.id)
	}
	l.mu.Unlock()
	if !ok {
		return noTopic(name)
	}
	t.markDeleted()
	return nil
}

// topic returns the named topic or an ErrNoTopic error.
func (l *Log) topic(name string) (*Topic, error) {
	t, ok := l.Topic(name)
	if !ok {
		return nil, noTopic(name)
	}
	return t, nil
}

func noTopic(name string) error {
	return errorf(ErrNoTopic, "embedlog: topic %q does not exist", name)
}

func checkName(what, name string) error {
	if len(name) == 0 || len(name) > maxNameLen {
		return errorf(ErrBadName, "embedlog: %s name of %d bytes, want 1..%d", what, len(name), maxNameLen)
	}
	return nil
}

// newID mints an id unique within this log: a random per-log prefix and a
// sequence number.
func (l *Log) newID() [16]byte {
	var id [16]byte
	copy(id[:8], l.idPrefix[:])
	binary.BigEndian.PutUint64(id[8:], l.idSeq.Add(1))
	return id
}

// nowMicros is the log clock in Unix microseconds.
func (l *Log) nowMicros() uint64 { return uint64(l.cfg.clock.Now().UnixMicro()) }

// GroupConsumerKey is the offset-store key of a consumer group, shared by the
// transport and the Iggy test server so both see the same group offsets.
func GroupConsumerKey(group string) string { return "group\x00" + group }

// SingleConsumerKey is the offset-store key of a single (non-group)
// consumer; it never collides with a GroupConsumerKey.
func SingleConsumerKey(consumer string) string { return "single\x00" + consumer }
