// Package iggy is the laser-go transport over Apache Iggy, in either of the
// two framings Iggy has spoken: Iggy 0.8's, through the official Go SDK
// (github.com/apache/iggy/foreign/go v0.8.0), and the VSR framing of Iggy
// 0.9+, through a client of its own (the SDK v0.8.0 does not speak it).
// The connection string picks one, 0.8 by default:
//
//	iggy://user:password@host:port/stream                 Iggy 0.8
//	iggy://user:password@host:port/stream?protocol=vsr    Iggy 0.9+
//	iggy+pat://token@host:port/stream?protocol=vsr&tls=true&tls_ca_file=/ca.pem&tls_domain=name
//
// TLS (VSR only) comes from the connection string or Config.TLS and never
// falls back to plaintext. Both framings share the transport's logic; the
// VSR client also follows a cluster to its leader (bounded against loops)
// and puts every read and write under a socket deadline.
//
// It shields the runtime from the SDK's defects: connecting is bounded by a
// dial timeout (the SDK constructor would retry a refused dial forever),
// every call by a call timeout (the SDK sets no deadlines), a panic of the
// SDK's decoders is recovered into an error, and a lost connection is
// rebuilt (new client, login, group rejoined) on the next call, with
// backoff after failed attempts. Errors are *runtime.Error values.
// A lost connection is a transient ErrConnectionLost, so a consumer backs
// off and resumes with its place kept; only a closed transport or
// subscription wraps runtime.ErrDisconnected, which stops a consumer. A
// reply that breaks the VSR protocol is a lost connection too, naming the
// server and what was wrong.
//
// The package tests run against the in-process server of package iggytest,
// fake VSR servers, and, when LASER_IGGY_ADDR is set, a real Iggy server
// (add ?protocol=vsr for a 0.9 one).
package iggy

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/internal/xxh32"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// maxPartitions is Iggy's limit on a topic's partition count.
const maxPartitions = 1000

// Transport is a runtime.Transport over one Iggy stream. Control calls
// (topics, publishing, reads) share one connection; each subscription (Join) has
// its own, because Iggy ties group membership to the connection.
type Transport struct {
	cfg    config
	cs     connString
	tls    *tls.Config // nil for plaintext
	stream iggcon.Identifier
	ctl    *session

	// idPrefix and idSeq mint message ids unique to this transport, by which
	// Publish finds the offsets Iggy gave its messages.
	idPrefix [8]byte
	idSeq    atomic.Uint64

	// pubMu serializes publishing, so the batch just sent is normally the
	// last one in its partition and locating it costs one small read.
	pubMu sync.Mutex

	mu       sync.Mutex
	streamID uint32
	haveID   bool
	topics   map[string]*topicInfo
}

// topicInfo is what the transport caches about a topic.
type topicInfo struct {
	id         uint32
	partitions atomic.Uint32 // refreshed by any caller while others publish
	refreshAt  atomic.Int64  // Unix ns after which Publish re-reads the count
	ident      iggcon.Identifier
	balanced   atomic.Uint32 // round robin of unkeyed records
}

var _ runtime.Transport = (*Transport)(nil)

// Dial connects to Iggy and logs in. connString is
// iggy://user:password@host:port/stream or iggy+pat://token@host:port/stream
// (port 8090 when omitted), with ?protocol=vsr for Iggy 0.9+ and its TLS
// parameters (see the package doc); the stream is created by EnsureTopics
// when missing. A server that cannot be reached fails within the dial
// timeout; a CA file that cannot be read, or TLS asked of the 0.8
// framing, fails at once with ErrConnString.
func Dial(ctx context.Context, connString string, cfg Config) (*Transport, error) {
	cs, err := parseConnString(connString)
	if err != nil {
		return nil, err
	}
	stream, err := iggcon.NewIdentifier(cs.stream)
	if err != nil {
		return nil, fmt.Errorf("%w: stream %q: %w", ErrConnString, cs.stream, err)
	}
	t := &Transport{cfg: cfg.resolve(), cs: cs, stream: stream, topics: make(map[string]*topicInfo)}
	if t.tls, err = tlsConfig(cs, cfg.TLS); err != nil {
		return nil, err
	}
	_, _ = rand.Read(t.idPrefix[:]) // crypto/rand.Read never fails on supported platforms
	t.ctl = newSession(t, "control", nil)
	if _, err := t.ctl.link(ctx, "dial"); err != nil {
		t.ctl.close()
		return nil, err
	}
	return t, nil
}

// Stream returns the name of the stream the transport works in.
func (t *Transport) Stream() string { return t.cs.stream }

// Close closes the control connection; subscriptions keep theirs until
// their own Close or Leave. Later calls fail with ErrClosed.
func (t *Transport) Close() error {
	t.ctl.close()
	return nil
}

// DeleteStream removes the transport's stream with every topic, record,
// group and stored offset in it, for tests and tooling that made the stream
// for themselves; a stream that does not exist is not an error. The
// transport may make the stream again with EnsureTopics.
func (t *Transport) DeleteStream(ctx context.Context) error {
	err := t.ctl.call(ctx, "delete stream "+t.cs.stream, func(c iggyClient) error {
		err := c.DeleteStream(t.stream)
		if errors.Is(err, ierror.ErrStreamIdNotFound) || errors.Is(err, ierror.ErrStreamNameNotFound) {
			return nil
		}
		return err
	})
	t.mu.Lock()
	t.haveID = false
	clear(t.topics)
	t.mu.Unlock()
	return err
}

// EnsureTopics creates the stream and the missing topics (partitions 0
// means 1), tolerating a concurrent creator. New topics are uncompressed,
// never expire and have no size limit.
func (t *Transport) EnsureTopics(ctx context.Context, partitions uint32, topics ...string) error {
	if partitions == 0 {
		partitions = 1
	}
	if partitions > maxPartitions {
		return failed("ensure topics", fmt.Errorf("%d partitions, want 1..%d", partitions, maxPartitions))
	}
	for _, name := range topics {
		if err := checkName("topic", name); err != nil {
			return failed("ensure topics", err)
		}
	}
	if err := t.ensureStream(ctx); err != nil {
		return err
	}
	for _, name := range topics {
		if err := t.ensureTopic(ctx, name, partitions); err != nil {
			return err
		}
	}
	return nil
}

func (t *Transport) ensureStream(ctx context.Context) error {
	op := "ensure stream " + t.cs.stream
	var sd *iggcon.StreamDetails
	err := t.ctl.call(ctx, op, func(c iggyClient) error {
		var err error
		sd, err = c.GetStream(t.stream)
		if errors.Is(err, ierror.ErrStreamIdNotFound) {
			sd, err = c.CreateStream(t.cs.stream)
			if errors.Is(err, ierror.ErrStreamNameAlreadyExists) {
				sd, err = c.GetStream(t.stream) // another replica won the race
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.streamID, t.haveID = sd.Id, true
	t.mu.Unlock()
	return nil
}

func (t *Transport) ensureTopic(ctx context.Context, name string, partitions uint32) error {
	ident, err := iggcon.NewIdentifier(name)
	if err != nil {
		return failed("ensure topic "+name, err)
	}
	var td *iggcon.TopicDetails
	err = t.ctl.call(ctx, "ensure topic "+name, func(c iggyClient) error {
		var err error
		td, err = c.GetTopic(t.stream, ident)
		if errors.Is(err, ierror.ErrTopicIdNotFound) {
			td, err = c.CreateTopic(t.stream, name, partitions, iggcon.CompressionAlgorithmNone,
				iggcon.IggyExpiryNeverExpire, math.MaxUint64, nil)
			if errors.Is(err, ierror.ErrTopicNameAlreadyExists) {
				td, err = c.GetTopic(t.stream, ident)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	t.remember(name, ident, td)
	return nil
}

func (t *Transport) remember(name string, ident iggcon.Identifier, td *iggcon.TopicDetails) *topicInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	ti, ok := t.topics[name]
	if !ok || ti.id != td.Id {
		ti = &topicInfo{id: td.Id, ident: ident}
		t.topics[name] = ti
	}
	ti.partitions.Store(td.PartitionsCount)
	ti.refreshAt.Store(t.cfg.clock.Now().Add(t.cfg.partitionRefresh).UnixNano())
	return ti
}

// topic returns the cached description of a topic, asking the server when
// it is not cached or refresh is set.
func (t *Transport) topic(ctx context.Context, op, name string, refresh bool) (*topicInfo, error) {
	t.mu.Lock()
	ti, ok := t.topics[name]
	t.mu.Unlock()
	if ok && !refresh {
		return ti, nil
	}
	ident, err := iggcon.NewIdentifier(name)
	if err != nil {
		return nil, failed(op, fmt.Errorf("topic %q: %w", name, err))
	}
	var td *iggcon.TopicDetails
	err = t.ctl.call(ctx, op, func(c iggyClient) error {
		var err error
		td, err = c.GetTopic(t.stream, ident)
		return err
	})
	if err != nil {
		if errors.Is(err, ierror.ErrTopicIdNotFound) {
			t.mu.Lock()
			delete(t.topics, name)
			t.mu.Unlock()
			return nil, failed(op, fmt.Errorf("topic %q does not exist in stream %q: %w", name, t.cs.stream, ierror.ErrTopicIdNotFound))
		}
		return nil, err
	}
	return t.remember(name, ident, td), nil
}

// Partitions returns the topic's partition count, as the server has it now.
func (t *Transport) Partitions(ctx context.Context, topic string) (uint32, error) {
	ti, err := t.topic(ctx, "partitions "+topic, topic, true)
	if err != nil {
		return 0, err
	}
	return ti.partitions.Load(), nil
}

// TopicIDs returns the numeric ids of the stream and the topic.
func (t *Transport) TopicIDs(ctx context.Context, topic string) (uint32, uint32, error) {
	op := "topic ids " + topic
	ti, err := t.topic(ctx, op, topic, false)
	if err != nil {
		return 0, 0, err
	}
	t.mu.Lock()
	sid, ok := t.streamID, t.haveID
	t.mu.Unlock()
	if !ok {
		var sd *iggcon.StreamDetails
		err := t.ctl.call(ctx, op, func(c iggyClient) error {
			var err error
			sd, err = c.GetStream(t.stream)
			return err
		})
		if err != nil {
			return 0, 0, err
		}
		t.mu.Lock()
		t.streamID, t.haveID = sd.Id, true
		t.mu.Unlock()
		sid = sd.Id
	}
	return sid, ti.id, nil
}

// StoredOffset returns the group's committed offset on a partition; ok is
// false when the group (or its offset there) does not exist.
func (t *Transport) StoredOffset(ctx context.Context, topic, group string, partition uint32) (uint64, bool, error) {
	op := "stored offset " + topic + "/" + group
	ti, err := t.checkPartition(ctx, op, topic, partition)
	if err != nil {
		return 0, false, err
	}
	gid, err := iggcon.NewIdentifier(group)
	if err != nil {
		return 0, false, failed(op, fmt.Errorf("group %q: %w", group, err))
	}
	var info *iggcon.ConsumerOffsetInfo
	err = t.ctl.call(ctx, op, func(c iggyClient) error {
		var err error
		info, err = c.GetConsumerOffset(iggcon.NewGroupConsumer(gid), t.stream, ti.ident, &partition)
		return err
	})
	if err != nil {
		return 0, false, err
	}
	// Iggy answers "nothing stored" with an empty OK, which the SDK returns
	// as a nil result.
	if info == nil {
		return 0, false, nil
	}
	return info.StoredOffset, true, nil
}

// checkPartition fails for a partition the topic does not have; Iggy would
// answer some requests for it with an empty OK instead.
func (t *Transport) checkPartition(ctx context.Context, op, topic string, partition uint32) (*topicInfo, error) {
	ti, err := t.topic(ctx, op, topic, false)
	if err != nil {
		return nil, err
	}
	if partition >= ti.partitions.Load() {
		if ti, err = t.topic(ctx, op, topic, true); err != nil {
			return nil, err
		}
		if partition >= ti.partitions.Load() {
			return nil, failed(op, fmt.Errorf("topic %q has no partition %d (it has %d): %w", topic, partition, ti.partitions.Load(), ierror.ErrPartitionNotFound))
		}
	}
	return ti, nil
}

// NextOffset returns the offset the next record appended to a partition
// will get: the partition's current (last) offset + 1, or 0 while it is
// empty (Iggy reports current offset 0 for both an empty partition and one
// holding a single record, so the message count tells them apart).
func (t *Transport) NextOffset(ctx context.Context, topic string, partition uint32) (uint64, error) {
	op := "next offset " + topic
	ident, err := iggcon.NewIdentifier(topic)
	if err != nil {
		return 0, failed(op, fmt.Errorf("topic %q: %w", topic, err))
	}
	var td *iggcon.TopicDetails
	err = t.ctl.call(ctx, op, func(c iggyClient) error {
		var err error
		td, err = c.GetTopic(t.stream, ident)
		return err
	})
	if errors.Is(err, ierror.ErrTopicIdNotFound) {
		return 0, failed(op, fmt.Errorf("topic %q does not exist in stream %q: %w", topic, t.cs.stream, ierror.ErrTopicIdNotFound))
	}
	if err != nil {
		return 0, err
	}
	t.remember(topic, ident, td)
	for _, p := range td.Partitions {
		if p.Id != partition {
			continue
		}
		if p.MessagesCount == 0 {
			return 0, nil
		}
		return p.CurrentOffset + 1, nil
	}
	return 0, failed(op, fmt.Errorf("topic %q has no partition %d (it has %d): %w", topic, partition, td.PartitionsCount, ierror.ErrPartitionNotFound))
}

// ReadRange reads up to count records of a partition from offset on, as a
// single consumer that commits nothing.
func (t *Transport) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	op := "read " + topic
	if count < 0 {
		return nil, failed(op, fmt.Errorf("read of %d records", count))
	}
	ti, err := t.checkPartition(ctx, op, topic, partition)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, nil
	}
	n := uint32(min(count, math.MaxUint32))
	var pm *iggcon.PolledMessage
	err = t.ctl.call(ctx, op, func(c iggyClient) error {
		var err error
		pm, err = c.PollMessages(t.stream, ti.ident, iggcon.DefaultConsumer(), iggcon.OffsetPollingStrategy(offset), n, false, &partition)
		return err
	})
	if err != nil {
		return nil, err
	}
	out, _ := t.incoming(nil, partition, pm.Messages, offset, count)
	return out, nil
}

// incoming converts polled messages of one partition, skipping offsets
// below from and stopping at max records; header lists share one
// allocation. It returns the next offset after the last one converted.
func (t *Transport) incoming(out []runtime.Incoming, partition uint32, msgs []iggcon.IggyMessage, from uint64, max int) ([]runtime.Incoming, uint64) {
	next := from
	if len(msgs) == 0 {
		return out, next
	}
	if out == nil {
		out = make([]runtime.Incoming, 0, min(len(msgs), max))
	}
	b := recordBuilder{t: t, partition: partition}
	for i := range msgs {
		if len(out) >= max {
			break
		}
		m := &msgs[i]
		if m.Header.Offset < from {
			continue
		}
		out = b.add(out, m.Header.Offset, m.Header.Timestamp, m.Payload, m.UserHeaders)
		next = m.Header.Offset + 1
	}
	return out, next
}

// recordBuilder turns one partition's polled messages into runtime records,
// for both ways a batch arrives (the SDK's messages, the codec's reply).
// Payloads and headers stay where the poll put them: the headers are
// checked once and read in place (wire.EncodedHeaders), never decoded into
// a list per record.
type recordBuilder struct {
	t         *Transport
	partition uint32
}

// add appends the record at offset to out.
func (b *recordBuilder) add(out []runtime.Incoming, offset, timestamp uint64, payload, userHeaders []byte) []runtime.Incoming {
	h, err := wire.ParseHeaders(userHeaders)
	if err != nil {
		// Iggy stores user headers unchecked, so a broken or hostile
		// producer can put these here; the record goes on without headers
		// and the consumer dead-letters it for lack of provenance.
		b.t.cfg.logger.Warn("iggy: undecodable user headers", "partition", b.partition, "offset", offset, "err", err)
	}
	return append(out, runtime.Incoming{
		Position:  runtime.Position{Partition: b.partition, Offset: offset},
		Timestamp: timestamp,
		Headers:   h,
		Payload:   payload,
	})
}

// newMessageID mints a message id unique to this transport.
func (t *Transport) newMessageID() [16]byte {
	var id [16]byte
	copy(id[:8], t.idPrefix[:])
	binary.BigEndian.PutUint64(id[8:], t.idSeq.Add(1))
	return id
}

// partitionFor places a record the way Iggy places a keyed message
// (xxHash32 of the key, seed 0, modulo the partition count) or, unkeyed, on
// the topic's round robin.
func partitionFor(ti *topicInfo, key string) uint32 {
	n := ti.partitions.Load()
	if n == 0 {
		return 0
	}
	if key != "" {
		return xxh32.Sum32([]byte(key), 0) % n
	}
	return (ti.balanced.Add(1) - 1) % n
}

func checkName(what, name string) error {
	if len(name) == 0 || len(name) > 255 {
		return fmt.Errorf("%s name of %d bytes, want 1..255", what, len(name))
	}
	return nil
}
