package iggy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggy/internal/vsr"
)

// vsrClient is one connection to an Iggy 0.9+ server in the VSR framing:
// the socket (TCP or TLS), its session and request ids, and one exchange
// at a time, each under a socket deadline of the call timeout on its write
// and its read. A failed exchange (I/O, a reply that breaks the protocol,
// an eviction) breaks the client: the socket is closed and every later
// call fails at once, so the transport drops the link and builds a new
// one. A refusal (an Iggy error code) leaves it usable.
type vsrClient struct {
	addr    string // the server, for errors
	conn    net.Conn
	r       *bufio.Reader
	timeout time.Duration

	mu     sync.Mutex // one exchange at a time; guards sess, hdr, broken and closed
	sess   *vsr.Session
	hdr    [vsr.HeaderSize]byte
	broken error
	closed bool // the socket was closed after broken was set

	dlMu    sync.Mutex // orders abort against the exchange's own deadline
	aborted bool
	abortCh chan struct{} // closed by the first abort: ends a replay's wait
}

var _ iggyClient = (*vsrClient)(nil)

func newVSRClient(conn net.Conn, addr string, timeout time.Duration, id vsr.ClientID) *vsrClient {
	return &vsrClient{addr: addr, conn: conn, r: bufio.NewReaderSize(conn, 64<<10), timeout: timeout, sess: vsr.NewSession(id), abortCh: make(chan struct{})}
}

// setDeadline sets the socket deadline unless the client was aborted,
// whose past deadline must stay.
func (c *vsrClient) setDeadline(t time.Time) {
	c.dlMu.Lock()
	if !c.aborted {
		_ = c.conn.SetDeadline(t)
	}
	c.dlMu.Unlock()
}

// abort fails the exchange in flight and every later one at once; the
// link is dropped after it.
func (c *vsrClient) abort() {
	c.dlMu.Lock()
	if !c.aborted {
		close(c.abortCh)
	}
	c.aborted = true
	_ = c.conn.SetDeadline(pastDeadline)
	c.dlMu.Unlock()
}

func (c *vsrClient) wasAborted() bool {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	return c.aborted
}

// Close closes the socket; a call in flight fails.
func (c *vsrClient) Close() error {
	c.abort()
	return c.conn.Close()
}

// unlock releases mu and then, when the client broke, closes the socket:
// a TLS close writes close_notify, which may wait seconds on a stalled peer,
// and must not hold up the callers waiting for mu.
func (c *vsrClient) unlock() {
	closing := c.broken != nil && !c.closed
	c.closed = c.closed || closing
	c.mu.Unlock()
	if closing {
		_ = c.conn.Close()
	}
}

// fail breaks the client with err, naming the server, and returns it; the
// socket fails every later read and write at once and is closed by unlock.
// Called with mu held.
func (c *vsrClient) fail(err error) error {
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() && !c.wasAborted() {
		err = fmt.Errorf("%w after %v: server %s: %w", ErrTimeout, c.timeout, c.addr, err)
	} else {
		err = fmt.Errorf("iggy: server %s: %w", c.addr, err)
	}
	if c.broken == nil {
		c.broken = err
	}
	_ = c.conn.SetDeadline(pastDeadline)
	return err
}

// newFrame returns a request buffer with room for the header and a body of
// about n bytes.
func newFrame(n int) []byte { return make([]byte, vsr.HeaderSize, vsr.HeaderSize+n) }

// roundTrip sends frame (the header's room, then the body) as command code
// and returns the reply's payload, in a buffer of its own. A payload
// longer than limit is read off the socket and dropped (the client stays
// in step), and the error is *replyTooLarge.
func (c *vsrClient) roundTrip(frame []byte, code uint32, limit int) ([]byte, error) {
	limit = min(limit, vsr.MaxFrameSize-vsr.HeaderSize) // no frame may be larger
	c.mu.Lock()
	defer c.unlock()
	if c.broken != nil {
		return nil, fmt.Errorf("%w (broken earlier: %w)", ErrConnectionLost, c.broken)
	}
	request, err := c.sess.Stamp(frame, code)
	if err != nil {
		return nil, fmt.Errorf("iggy: command %d to %s: %w", code, c.addr, err)
	}
	op := vsr.OperationOf(code)
	deadline := time.Now().Add(c.timeout)
	c.setDeadline(deadline)
	for {
		payload, err := c.exchange(frame, code, request, op, limit)
		refused, ok := errors.AsType[*serverError](err)
		// Not committed yet (a view change, a pipeline full): the Iggy server
		// (0.9) answers a replayed metadata change from its client table and a
		// read changes nothing, but it keeps no request ids of partition
		// operations, so a replayed send could be appended twice; those go back
		// to the caller as a transient error, whose retry the runtime's
		// idempotency keys make safe.
		if !ok || refused.code != transientNotCommitted || !op.Replayable() || time.Now().Add(replayInterval).After(deadline) {
			return payload, err
		}
		// mu stays held through the wait: the replay must be the next
		// request on the connection, as the server's client table takes a
		// request id below one it already saw for a stale retry. Close ends
		// the wait at once.
		wait := time.NewTimer(replayInterval)
		select {
		case <-wait.C:
		case <-c.abortCh:
			wait.Stop()
		}
	}
}

// replayInterval is the wait before replaying a request the server did not
// commit yet.
const replayInterval = 50 * time.Millisecond

// transientNotCommitted is the code of a request the server did not commit
// yet; the client replays a replayable one until the call timeout.
const transientNotCommitted = 57

// exchange writes frame and reads its reply, under the deadline already
// set. Called with mu held.
func (c *vsrClient) exchange(frame []byte, code uint32, request uint64, op vsr.Operation, limit int) ([]byte, error) {
	if _, err := c.conn.Write(frame); err != nil {
		return nil, c.fail(fmt.Errorf("writing command %d: %w", code, err))
	}
	if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
		return nil, c.fail(fmt.Errorf("reading the reply to command %d: %w", code, err))
	}
	n, err := vsr.CheckHeader(&c.hdr)
	if errors.Is(err, vsr.ErrFrameTooLarge) && code == vsr.CodePollMessages {
		// A poll reply over the frame limit is read past below like one over
		// the caller's bound: the caller asks for fewer records.
		err = nil
	}
	if err == nil {
		err = vsr.CheckReplyTo(&c.hdr, c.sess.Client(), request, op)
	}
	if refused, ok := errors.AsType[*vsr.Refused](err); ok {
		// A refusal carries no body; one that does is read past, to stay in step.
		if _, err := io.CopyN(io.Discard, c.r, int64(n)); err != nil {
			return nil, c.fail(fmt.Errorf("reading the reply to command %d: %w", code, err))
		}
		return nil, c.refusal(refused.Code)
	}
	if err != nil {
		return nil, c.fail(c.protocolError(code, err))
	}
	if n > limit {
		if _, err := io.CopyN(io.Discard, c.r, int64(n)); err != nil {
			return nil, c.fail(fmt.Errorf("reading the reply to command %d: %w", code, err))
		}
		return nil, &replyTooLarge{n: uint32(n)}
	}
	body, err := readGrowing(c.r, n)
	if err != nil {
		return nil, c.fail(fmt.Errorf("reading the reply to command %d: %w", code, err))
	}
	payload, err := vsr.DecodeReply(&c.hdr, body, c.sess.Client(), request, op)
	if refused, ok := errors.AsType[*vsr.Refused](err); ok {
		return nil, c.refusal(refused.Code)
	}
	if err != nil {
		return nil, c.fail(c.protocolError(code, err))
	}
	return payload, nil
}

// readChunk is how much of a body readGrowing allocates before any of it
// arrives.
const readChunk = 1 << 20

// readGrowing reads n bytes off r into a buffer grown as they arrive, so a
// header stating a large size costs memory only for the bytes that follow
// it.
func readGrowing(r io.Reader, n int) ([]byte, error) {
	b := make([]byte, 0, min(n, readChunk))
	for len(b) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(n-len(b), len(b)))
		}
		m, err := r.Read(b[len(b):min(n, cap(b))])
		b = b[:len(b)+m]
		if err != nil && len(b) < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return b, nil
}

// protocolError describes a reply that broke the protocol or an eviction.
func (c *vsrClient) protocolError(code uint32, err error) error {
	if ev, ok := errors.AsType[*vsr.Evicted](err); ok {
		return &evictedError{ev: ev}
	}
	return fmt.Errorf("the reply to command %d: %w", code, err)
}

// refusal is the error of a request the server refused with code, as the
// SDK's error for it, so errors.Is(err, ierror.ErrTopicIdNotFound) and
// friends hold. TransientNotAccepted (58: not the leader, or no leader
// yet) breaks the client, so the reconnect asks for the cluster's leader.
func (c *vsrClient) refusal(code uint32) error {
	if code == transientNotAccepted {
		return c.fail(fmt.Errorf("request not accepted (error code %d): this node does not lead the cluster now", code))
	}
	return &serverError{code: code, ie: ierror.FromCode(ierror.Code(code))}
}

// transientNotAccepted is the code of a request a node refused because it
// does not lead the cluster (or none does yet).
const transientNotAccepted = 58

// serverError is an Iggy error code from a VSR server, as the SDK's error
// for it; a code the SDK v0.8.0 does not know reads as its catch-all
// ierror.ErrError (code 1), as the SDK would report it, but keeps the
// server's code in its text.
type serverError struct {
	code uint32
	ie   ierror.IggyError
}

func (e *serverError) Error() string {
	if e.ie.Code() == ierror.ErrorCode && e.code != uint32(ierror.ErrorCode) {
		return fmt.Sprintf("iggy: server error code %d", e.code)
	}
	return e.ie.Error()
}

// Code is the SDK's code for the error.
func (e *serverError) Code() ierror.Code { return e.ie.Code() }

func (e *serverError) Unwrap() error { return e.ie }

// evictedError is an eviction frame: the server ended the session. It
// unwraps to the SDK's error for the reason where there is one (invalid
// credentials, invalid token, unauthenticated, stale client), so a refused
// login reads as one.
type evictedError struct{ ev *vsr.Evicted }

func (e *evictedError) Error() string { return e.ev.Error() }

func (e *evictedError) Unwrap() []error {
	var mapped error
	switch e.ev.Reason {
	case vsr.EvictInvalidCredentials:
		mapped = ierror.ErrInvalidCredentials
	case vsr.EvictInvalidToken:
		mapped = ierror.ErrInvalidPersonalAccessToken
	case vsr.EvictNoSession, vsr.EvictSessionTooLow, vsr.EvictSessionMismatch, vsr.EvictUserInactive, vsr.EvictSessionError:
		mapped = ierror.ErrUnauthenticated
	case vsr.EvictStaleClient:
		mapped = ierror.ErrStaleClient
	default:
		return []error{e.ev}
	}
	return []error{e.ev, mapped}
}

// call sends a request of code with body and returns the payload.
func (c *vsrClient) call(code uint32, body []byte) ([]byte, error) {
	f := append(newFrame(len(body)), body...)
	return c.roundTrip(f, code, vsr.MaxFrameSize)
}

func (c *vsrClient) register(code uint32, user, password, token string) (*iggcon.IdentityInfo, error) {
	body, err := vsr.RegisterBody(user, password, token)
	if err != nil {
		return nil, err
	}
	p, err := c.call(code, body)
	if err != nil {
		return nil, err
	}
	r, err := vsr.DecodeRegistered(p)
	if err == nil {
		err = c.bind(r.Session)
	}
	if err != nil {
		return nil, c.decoded(fmt.Errorf("the register reply: %w", err))
	}
	return &iggcon.IdentityInfo{UserId: r.UserID}, nil
}

func (c *vsrClient) bind(session uint64) error {
	c.mu.Lock()
	defer c.unlock()
	return c.sess.Bind(session)
}

// LoginUser registers a session with a user and password.
func (c *vsrClient) LoginUser(username, password string) (*iggcon.IdentityInfo, error) {
	return c.register(vsr.CodeLoginRegister, username, password, "")
}

// LoginWithPersonalAccessToken registers a session with a token.
func (c *vsrClient) LoginWithPersonalAccessToken(token string) (*iggcon.IdentityInfo, error) {
	return c.register(vsr.CodeLoginRegisterToken, "", "", token)
}

// Ping asks the server for an empty answer.
func (c *vsrClient) Ping() error {
	_, err := c.call(vsr.CodePing, nil)
	return err
}

// clusterNodes asks for the cluster's nodes.
func (c *vsrClient) clusterNodes() ([]vsr.Node, error) {
	p, err := c.call(vsr.CodeClusterMetadata, nil)
	if err != nil {
		return nil, err
	}
	_, nodes, err := vsr.DecodeClusterMetadata(p)
	if err != nil {
		return nil, c.decoded(err)
	}
	return nodes, nil
}

// decoded turns a decoding failure of a reply into a broken client.
func (c *vsrClient) decoded(err error) error {
	if err == nil {
		return nil
	}
	c.mu.Lock()
	defer c.unlock()
	return c.fail(err)
}

func ids(b []byte, idents ...iggcon.Identifier) []byte {
	for _, id := range idents {
		b, _ = id.AppendBinary(b) // never fails
	}
	return b
}

func appendConsumer(b []byte, c iggcon.Consumer) []byte {
	return ids(append(b, byte(c.Kind)), c.Id)
}

func appendPartition(b []byte, p *uint32) []byte {
	if p == nil {
		return append(b, 0, 0, 0, 0, 0)
	}
	return binary.LittleEndian.AppendUint32(append(b, 1), *p)
}

func streamDetails(s vsr.Stream) *iggcon.StreamDetails {
	sd := &iggcon.StreamDetails{Stream: iggcon.Stream{Id: s.ID, Name: s.Name, TopicsCount: uint32(len(s.Topics))}}
	for _, tp := range s.Topics {
		sd.Topics = append(sd.Topics, iggcon.Topic{Id: tp.ID, Name: tp.Name, PartitionsCount: tp.PartitionsCount, MessagesCount: tp.MessagesCount})
	}
	return sd
}

func topicDetails(t vsr.Topic) *iggcon.TopicDetails {
	td := &iggcon.TopicDetails{Topic: iggcon.Topic{Id: t.ID, Name: t.Name, PartitionsCount: t.PartitionsCount, MessagesCount: t.MessagesCount}}
	td.Partitions = make([]iggcon.PartitionContract, len(t.Partitions))
	for i, p := range t.Partitions {
		td.Partitions[i] = iggcon.PartitionContract{Id: p.ID, CurrentOffset: p.CurrentOffset, MessagesCount: p.MessagesCount}
	}
	return td
}

func groupDetails(g vsr.Group) *iggcon.ConsumerGroupDetails {
	return &iggcon.ConsumerGroupDetails{ConsumerGroup: iggcon.ConsumerGroup{Id: g.ID, Name: g.Name, MembersCount: g.Members}}
}

// GetStream describes a stream and its topics; a missing stream is
// ierror.ErrStreamIdNotFound.
func (c *vsrClient) GetStream(streamID iggcon.Identifier) (*iggcon.StreamDetails, error) {
	p, err := c.call(vsr.CodeGetStream, ids(nil, streamID))
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, ierror.ErrStreamIdNotFound
	}
	s, err := vsr.DecodeStream(p)
	if err != nil {
		return nil, c.decoded(err)
	}
	return streamDetails(s), nil
}

// CreateStream creates a stream.
func (c *vsrClient) CreateStream(name string) (*iggcon.StreamDetails, error) {
	if err := checkName("stream", name); err != nil {
		return nil, err
	}
	p, err := c.call(vsr.CodeCreateStream, append([]byte{byte(len(name))}, name...))
	if err != nil {
		return nil, err
	}
	s, err := vsr.DecodeStream(p)
	if err != nil {
		return nil, c.decoded(err)
	}
	return streamDetails(s), nil
}

// DeleteStream removes a stream with its topics, records and groups; a
// missing stream is ierror.ErrStreamIdNotFound.
func (c *vsrClient) DeleteStream(id iggcon.Identifier) error {
	_, err := c.call(vsr.CodeDeleteStream, ids(nil, id))
	return err
}

// GetTopic describes a topic and its partitions; a missing topic is
// ierror.ErrTopicIdNotFound.
func (c *vsrClient) GetTopic(streamID, topicID iggcon.Identifier) (*iggcon.TopicDetails, error) {
	p, err := c.call(vsr.CodeGetTopic, ids(nil, streamID, topicID))
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, ierror.ErrTopicIdNotFound
	}
	t, err := vsr.DecodeTopic(p)
	if err != nil {
		return nil, c.decoded(err)
	}
	return topicDetails(t), nil
}

// Topic options of a create: the fixed fields of the 0.8 protocol became
// typed key/value options.
const (
	optionKindString = 2
	optionKindUint64 = 12
)

func appendOption(b []byte, key string, kind byte, value []byte) []byte {
	b = append(b, optionKindString)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(key)))
	b = append(append(b, key...), kind)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(value)))
	return append(b, value...)
}

// CreateTopic creates a topic; compression other than none or gzip is
// refused, the replication factor is the server's own in a cluster.
func (c *vsrClient) CreateTopic(streamID iggcon.Identifier, name string, partitionsCount uint32, compression iggcon.CompressionAlgorithm,
	messageExpiry iggcon.Duration, maxTopicSize uint64, _ *uint8) (*iggcon.TopicDetails, error) {
	if err := checkName("topic", name); err != nil {
		return nil, err
	}
	b := ids(nil, streamID)
	b = binary.LittleEndian.AppendUint32(b, partitionsCount)
	b = append(append(b, byte(len(name))), name...)
	switch compression {
	case iggcon.CompressionAlgorithmNone:
	case iggcon.CompressionAlgorithmGzip:
		b = appendOption(b, "compression_algorithm", optionKindString, []byte("gzip"))
	default:
		return nil, fmt.Errorf("iggy: compression algorithm %d is not one VSR topics take", compression)
	}
	if messageExpiry != 0 {
		b = appendOption(b, "message_expiry", optionKindUint64, binary.LittleEndian.AppendUint64(nil, uint64(messageExpiry)))
	}
	if maxTopicSize != 0 {
		b = appendOption(b, "max_topic_size", optionKindUint64, binary.LittleEndian.AppendUint64(nil, maxTopicSize))
	}
	p, err := c.call(vsr.CodeCreateTopic, b)
	if err != nil {
		return nil, err
	}
	t, err := vsr.DecodeTopic(p)
	if err != nil {
		return nil, c.decoded(err)
	}
	return topicDetails(t), nil
}

// SendMessages appends messages to the partition partitioning names (the
// only partitioning the transport uses).
func (c *vsrClient) SendMessages(streamID, topicID iggcon.Identifier, partitioning iggcon.Partitioning, messages []iggcon.IggyMessage) error {
	if partitioning.Kind != iggcon.PartitionIdKind || len(partitioning.Value) != 4 {
		return fmt.Errorf("iggy: a VSR send names its partition, got partitioning kind %d", partitioning.Kind)
	}
	if len(messages) == 0 {
		return ierror.ErrInvalidMessagesCount
	}
	out := make([]vsr.Outgoing, len(messages))
	for i := range messages {
		m := &messages[i]
		out[i] = vsr.Outgoing{ID: m.Header.Id, Payload: m.Payload, Headers: m.UserHeaders}
	}
	sid, _ := streamID.MarshalBinary()
	tid, _ := topicID.MarshalBinary()
	// Checked before the frame is built: an oversized frame is refused by
	// Stamp, which would read as a lost connection and be retried forever.
	if n := vsr.HeaderSize + vsr.SendSize(len(sid), len(tid), out); n > vsr.MaxFrameSize {
		return fmt.Errorf("iggy: a send of %d messages takes a %d-byte frame, over the VSR limit of %d bytes: %w",
			len(out), n, vsr.MaxFrameSize, ierror.ErrTooBigMessagePayload)
	}
	f := newFrame(vsr.SendSize(len(sid), len(tid), out))
	f = vsr.AppendSend(f, sid, tid, binary.LittleEndian.Uint32(partitioning.Value), uint64(time.Now().UnixMicro()), out)
	_, err := c.roundTrip(f, vsr.CodeSendMessages, vsr.MaxFrameSize)
	return err
}

// appendPollBody appends a poll request's body.
func appendPollBody(b []byte, consumer iggcon.Consumer, streamID, topicID iggcon.Identifier, partitionID *uint32, strategy iggcon.PollingStrategy, count uint32, autoCommit bool) []byte {
	b = appendConsumer(b, consumer)
	b = ids(b, streamID, topicID)
	b = appendPartition(b, partitionID)
	b = append(b, byte(strategy.Kind))
	b = binary.LittleEndian.AppendUint64(b, strategy.Value)
	b = binary.LittleEndian.AppendUint32(b, count)
	if autoCommit {
		return append(b, 1)
	}
	return append(b, 0)
}

// PollMessages reads messages, as the SDK's PolledMessage: the transport's
// reads outside a subscription's poll (ReadRange, locating a publish,
// checking ownership) come through here.
func (c *vsrClient) PollMessages(streamID, topicID iggcon.Identifier, consumer iggcon.Consumer, strategy iggcon.PollingStrategy,
	count uint32, autoCommit bool, partitionID *uint32) (*iggcon.PolledMessage, error) {
	var p []byte
	for {
		var err error
		p, err = c.call(vsr.CodePollMessages, appendPollBody(nil, consumer, streamID, topicID, partitionID, strategy, count, autoCommit))
		if _, big := errors.AsType[*replyTooLarge](err); big && count > 1 {
			// Read past and dropped: fewer records make a smaller reply.
			count /= 2
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	r, pp, err := vsr.NewPollReader(p)
	if err != nil {
		return nil, c.decoded(err)
	}
	pm := &iggcon.PolledMessage{PartitionId: pp.Partition, CurrentOffset: pp.CurrentOffset, MessageCount: pp.Count}
	pm.Messages = make([]iggcon.IggyMessage, 0, min(int(pp.Count), len(p)/vsr.MessageHeaderSize))
	for {
		m, ok, err := r.Next()
		if err != nil {
			return nil, c.decoded(err)
		}
		if !ok {
			return pm, nil
		}
		pm.Messages = append(pm.Messages, iggcon.IggyMessage{
			Header: iggcon.MessageHeader{Id: m.ID, Offset: m.Offset, Timestamp: m.Timestamp,
				PayloadLength: uint32(len(m.Payload)), UserHeaderLength: uint32(len(m.Headers))},
			Payload: m.Payload, UserHeaders: m.Headers,
		})
	}
}

// GetConsumerGroup describes a group; a missing one is
// ierror.ErrConsumerGroupIdNotFound.
func (c *vsrClient) GetConsumerGroup(streamID, topicID, groupID iggcon.Identifier) (*iggcon.ConsumerGroupDetails, error) {
	p, err := c.call(vsr.CodeGetGroup, ids(nil, streamID, topicID, groupID))
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, ierror.ErrConsumerGroupIdNotFound
	}
	g, err := vsr.DecodeGroup(p)
	if err != nil {
		return nil, c.decoded(err)
	}
	return groupDetails(g), nil
}

// CreateConsumerGroup creates a group.
func (c *vsrClient) CreateConsumerGroup(streamID, topicID iggcon.Identifier, name string) (*iggcon.ConsumerGroupDetails, error) {
	if err := checkName("consumer group", name); err != nil {
		return nil, err
	}
	b := ids(nil, streamID, topicID)
	p, err := c.call(vsr.CodeCreateGroup, append(append(b, byte(len(name))), name...))
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return &iggcon.ConsumerGroupDetails{ConsumerGroup: iggcon.ConsumerGroup{Name: name}}, nil
	}
	g, err := vsr.DecodeGroup(p)
	if err != nil {
		return nil, c.decoded(err)
	}
	return groupDetails(g), nil
}

// JoinConsumerGroup makes this connection's session a member of the group.
func (c *vsrClient) JoinConsumerGroup(streamID, topicID, groupID iggcon.Identifier) error {
	_, err := c.call(vsr.CodeJoinGroup, ids(nil, streamID, topicID, groupID))
	return err
}

// LeaveConsumerGroup ends this session's membership.
func (c *vsrClient) LeaveConsumerGroup(streamID, topicID, groupID iggcon.Identifier) error {
	_, err := c.call(vsr.CodeLeaveGroup, ids(nil, streamID, topicID, groupID))
	return err
}

// StoreConsumerOffset stores a consumer's offset, acknowledged by a quorum.
func (c *vsrClient) StoreConsumerOffset(consumer iggcon.Consumer, streamID, topicID iggcon.Identifier, offset uint64, partitionID *uint32) error {
	b := appendConsumer(nil, consumer)
	b = ids(b, streamID, topicID)
	b = appendPartition(b, partitionID)
	b = binary.LittleEndian.AppendUint64(b, offset)
	_, err := c.call(vsr.CodeStoreOffset, append(b, 1))
	return err
}

// GetConsumerOffset returns a consumer's stored offset, nil when none is.
func (c *vsrClient) GetConsumerOffset(consumer iggcon.Consumer, streamID, topicID iggcon.Identifier, partitionID *uint32) (*iggcon.ConsumerOffsetInfo, error) {
	b := appendConsumer(nil, consumer)
	b = ids(b, streamID, topicID)
	p, err := c.call(vsr.CodeGetOffset, appendPartition(b, partitionID))
	if err != nil {
		return nil, err
	}
	o, ok, err := vsr.DecodeOffset(p)
	if err != nil {
		return nil, c.decoded(err)
	}
	if !ok {
		return nil, nil
	}
	return &iggcon.ConsumerOffsetInfo{PartitionId: o.Partition, CurrentOffset: o.CurrentOffset, StoredOffset: o.StoredOffset}, nil
}

// pollRaw sends a subscription's poll request (frame, from
// pollRequest.build) and returns the reply's payload for decodeVSRPoll.
func (c *vsrClient) pollRaw(frame []byte, limit int) ([]byte, error) {
	return c.roundTrip(frame, vsr.CodePollMessages, limit)
}
