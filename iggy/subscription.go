package iggy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggy/internal/vsr"
	"github.com/lasergo/laser/runtime"
)

// errLeft reports a call on a subscription that left its group.
var errLeft = errors.New("iggy: subscription left its consumer group")

// closeLeaveTimeout bounds the leave Close sends before it drops the
// connection.
const closeLeaveTimeout = time.Second

// subscription is one member of an Iggy consumer group, on a connection of
// its own (Iggy ties membership to the connection). After the connection is
// rebuilt it joins the group again and keeps its place.
//
// How it polls: Iggy's group poll without a partition and with the "next"
// strategy starts at the group's stored offset + 1, so it hands out again
// every record that is delivered but not yet committed, and a consumer
// with a backlog in flight would see only repeats. Instead the subscription
// keeps a cursor per partition and polls each partition by explicit id with
// the "offset" strategy from its cursor. Iggy answers a poll of a partition
// the member does not own with an empty (0, 0) reply (Iggy 0.9 with an
// empty reply naming partition vsr.ResyncPartition), which tells the
// subscription the partition is not (or no longer) its own. A partition
// that is new to this member, or that it lost, is polled with "next", so it
// starts at the group's stored offset + 1, but never below the cursor: what
// this member already delivered is not delivered again, unless a commit
// there was refused meanwhile (then the partition is read again from the
// stored offset, as for any new owner). Cursors survive a
// reconnect, so a subscription that gets its partitions back neither skips
// nor repeats records. The cost is one round trip per partition of the
// topic per Poll when there is nothing to read.
type subscription struct {
	t        *Transport
	topic    string
	group    string
	topicID  iggcon.Identifier
	groupID  iggcon.Identifier
	consumer iggcon.Consumer
	req      pollRequest // the poll request of this member, for the codec of rawpoll.go
	sess     *session
	// Operation names for errors, built once: Poll and Commit are hot.
	opPoll, opCommit string

	partitions atomic.Uint32
	refreshAt  atomic.Int64 // Unix ns after which Poll re-reads the partition count

	mu      sync.Mutex // serializes Poll and guards the cursors
	cursors []cursor
	next    int // partition the next Poll starts at

	state atomic.Uint32
}

const (
	subActive uint32 = iota
	subLeft
	subClosed
)

// cursor is the next offset to read on a partition. known is false until
// this member has read there and after it lost the partition; next then
// stays as a floor under what the next read may return.
type cursor struct {
	next  uint64
	known bool
}

var _ runtime.Subscription = (*subscription)(nil)

// Join makes a new member of group (created when missing) on an existing
// topic, over a connection of its own.
func (t *Transport) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	op := "join " + topic + "/" + group
	if err := checkName("consumer group", group); err != nil {
		return nil, failed(op, err)
	}
	if _, err := t.ctl.current(op); err != nil {
		return nil, err
	}
	ti, err := t.topic(ctx, op, topic, false)
	if err != nil {
		return nil, err
	}
	gid, err := iggcon.NewIdentifier(group)
	if err != nil {
		return nil, failed(op, err)
	}
	s := &subscription{
		t:        t,
		topic:    topic,
		group:    group,
		topicID:  ti.ident,
		groupID:  gid,
		consumer: iggcon.NewGroupConsumer(gid),
		opPoll:   "poll " + topic + "/" + group,
		opCommit: "commit " + topic + "/" + group,
	}
	if s.req, err = newPollRequest(s.consumer, t.stream, ti.ident, t.cs.protocol); err != nil {
		return nil, failed(op, err)
	}
	s.partitions.Store(ti.partitions.Load())
	s.sess = newSession(t, "subscription "+topic+"/"+group, s.rejoin)
	s.sess.owned = true
	if _, err := s.sess.link(ctx, op); err != nil {
		s.sess.close()
		return nil, err
	}
	return s, nil
}

// rejoin runs after every login of the subscription's connection: it
// creates the group when missing, joins it and re-reads the partition count.
func (s *subscription) rejoin(ctx context.Context, l *link) error {
	op := "join " + s.topic + "/" + s.group
	var td *iggcon.TopicDetails
	class, _, err := s.t.bounded(ctx, l, func(c iggyClient) error {
		_, err := c.GetConsumerGroup(s.t.stream, s.topicID, s.groupID)
		if errors.Is(err, ierror.ErrConsumerGroupIdNotFound) {
			_, err = c.CreateConsumerGroup(s.t.stream, s.topicID, s.group)
			if errors.Is(err, ierror.ErrConsumerGroupNameAlreadyExists) {
				err = nil // another member created it first
			}
		}
		if err != nil {
			return err
		}
		if err := c.JoinConsumerGroup(s.t.stream, s.topicID, s.groupID); err != nil {
			return err
		}
		td, err = c.GetTopic(s.t.stream, s.topicID)
		if err == nil && td == nil {
			err = ierror.ErrTopicIdNotFound
		}
		return err
	})
	if err != nil {
		if errors.Is(err, ierror.ErrTopicIdNotFound) {
			return failed(op, fmt.Errorf("topic %q does not exist in stream %q: %w", s.topic, s.t.cs.stream, err))
		}
		return wrap(op, class, err)
	}
	s.partitions.Store(td.PartitionsCount)
	s.refreshAt.Store(s.t.cfg.clock.Now().Add(s.t.cfg.partitionRefresh).UnixNano())
	return nil
}

// usable explains why the subscription cannot be used, if it cannot.
func (s *subscription) usable(op string) error {
	switch s.state.Load() {
	case subClosed:
		return wrap(op, classDisconnected, fmt.Errorf("subscription to %s/%s: %w", s.topic, s.group, ErrClosed))
	case subLeft:
		return failed(op, fmt.Errorf("%w %s of topic %s", errLeft, s.group, s.topic))
	}
	return nil
}

// Poll returns up to max records from the partitions this member owns,
// never committing. Each call starts one partition further along, so a busy
// partition cannot starve the others. When a partition fails after others
// returned records, Poll returns those records and the error comes back on
// the next call.
func (s *subscription) Poll(ctx context.Context, max int) ([]runtime.Incoming, error) {
	op := s.opPoll
	if err := s.usable(op); err != nil {
		return nil, err
	}
	if max < 0 {
		return nil, failed(op, fmt.Errorf("poll of %d records", max))
	}
	if max == 0 {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.sess.link(ctx, op); err != nil {
		return nil, err
	}
	s.maybeRefresh(ctx, op)
	n := int(s.partitions.Load())
	if n == 0 {
		return nil, nil
	}
	for len(s.cursors) < n {
		s.cursors = append(s.cursors, cursor{})
	}
	start := s.next % n
	s.next = (start + 1) % n
	var out []runtime.Incoming
	budget := s.t.cfg.maxPollBytes // reply bytes this poll may still take in
	for i := 0; i < n && len(out) < max && budget > 0; i++ {
		p := uint32((start + i) % n)
		c := &s.cursors[p]
		strategy := iggcon.NextPollingStrategy()
		if c.known {
			strategy = iggcon.OffsetPollingStrategy(c.next)
		}
		// The call may outlive a timeout and still run after Poll returned: it
		// reads only these copies and hands its result back through done,
		// which Poll reads only once the call completed.
		want := uint32(min(max-len(out), 1<<20))
		room, from, firstOfPoll, callBudget := max-len(out), c.next, len(out) == 0, budget
		done := make(chan pollResult, 1)
		err := s.sess.callLink(ctx, op, func(l *link) error {
			var res pollResult
			err := s.pollOne(l, p, strategy, want, room, from, firstOfPoll, callBudget, &res)
			done <- res
			return err
		})
		var res pollResult
		if err == nil {
			res = <-done
			budget -= res.replyBytes
		}
		if res.deferred {
			break
		}
		if err == nil && res.vsrRaw {
			if out == nil {
				out = res.vsrPart
			} else {
				out = append(out, res.vsrPart...)
			}
			s.settle(p, res.vsrPolled.messages, res.vsrPolled.partitionID, res.vsrPolled.currentOffset, res.vsrNext)
		} else if err == nil && res.raw {
			before := len(out)
			var next uint64
			var pp polledPartition
			out, next, pp, err = s.t.decodePoll(out, p, res.reply, c.next, max)
			if err != nil {
				out = out[:before]
				err = failed(op, err)
			} else {
				s.settle(p, pp.messages, pp.partitionID, pp.currentOffset, next)
			}
		}
		if err != nil {
			if len(out) > 0 {
				return out, nil
			}
			return nil, err
		}
		if !res.raw {
			out = s.take(out, p, res.pm, max)
		}
	}
	return out, nil
}

// pollResult is what one partition's poll call hands back to Poll.
type pollResult struct {
	pm         *iggcon.PolledMessage // through the SDK
	reply      []byte                // the raw 0.8 reply
	raw        bool                  // a raw path: reply, or vsrPart when vsrRaw
	vsrRaw     bool                  // the VSR framing, decoded in the call
	vsrPart    []runtime.Incoming
	vsrNext    uint64
	vsrPolled  polledPartition
	deferred   bool // the partition's next record did not fit the budget
	replyBytes int  // reply bytes taken from the poll's budget
}

// pollOne polls partition p over l for want records (room the most Poll
// takes, from the cursor's offset, firstOfPoll when Poll holds no record
// yet, budget the reply bytes left) into res.
func (s *subscription) pollOne(l *link, p uint32, strategy iggcon.PollingStrategy, want uint32, room int, from uint64, firstOfPoll bool, budget int, res *pollResult) error {
	var err error
	if l.vsr != nil || (l.sdkMu != nil && l.socket != nil) {
		res.raw, res.vsrRaw = true, l.vsr != nil
		for {
			limit := budget
			if want == 1 && firstOfPoll && limit < maxRecordReply {
				limit = maxRecordReply
			}
			if res.vsrRaw {
				res.reply, err = l.vsr.pollRaw(s.req.build(p, strategy, want), limit)
			} else {
				res.reply, err = exchange(l.socket, l.sdkMu, s.req.build(p, strategy, want), limit)
			}
			big, ok := errors.AsType[*replyTooLarge](err)
			if !ok || want == 1 {
				break
			}
			// Ask for about as many records as fit, at most half.
			want = uint32(min(uint64(want)/2, uint64(want)*uint64(limit)/uint64(big.n)))
			if want == 0 {
				want = 1
			}
		}
		if _, ok := errors.AsType[*replyTooLarge](err); ok {
			// One record that does not fit what is left: the next poll
			// takes it first.
			res.deferred, err = true, nil
		}
		res.replyBytes = len(res.reply)
		if err == nil && res.vsrRaw && !res.deferred {
			// Decoded here, so a reply that does not decode fails the call:
			// the link is dropped and rebuilt, as for any reply that breaks
			// the protocol.
			res.vsrPart, res.vsrNext, res.vsrPolled, err = s.t.decodeVSRPoll(nil, p, res.reply, from, room)
			if err != nil {
				res.vsrPart = nil
				err = fmt.Errorf("iggy: server %s: poll of partition %d: %w", l.vsr.addr, p, err)
			}
		}
		return err
	}
	res.pm, err = l.client.PollMessages(s.t.stream, s.topicID, s.consumer, strategy, want, false, &p)
	return err
}

// take appends the records of one partition's poll through the SDK and
// moves its cursor (see settle).
func (s *subscription) take(out []runtime.Incoming, p uint32, pm *iggcon.PolledMessage, limit int) []runtime.Incoming {
	next := s.cursors[p].next
	if len(pm.Messages) > 0 {
		out, next = s.t.incoming(out, p, pm.Messages, next, limit)
	}
	s.settle(p, len(pm.Messages), pm.PartitionId, pm.CurrentOffset, next)
	return out
}

// settle moves partition p's cursor after a poll whose reply held messages
// (partitionID and currentOffset as the reply stated them) and whose
// records up to next were taken. A reply saying the partition is not this
// member's clears known but keeps the cursor as a floor: when the
// partition comes back, records below it (already delivered here) are not
// handed out again, and the "next" poll starts above it anyway when
// another member moved the group further.
func (s *subscription) settle(p uint32, messages int, partitionID uint32, currentOffset, next uint64) {
	c := &s.cursors[p]
	if messages == 0 {
		notOwned := partitionID != p
		if p == 0 && partitionID != vsr.ResyncPartition {
			// A (0, 0) reply for partition 0 is also what an owned
			// partition holding at most one record gives; only a cursor
			// past offset 1 proves it is someone else's. (A VSR server
			// names vsr.ResyncPartition instead, which leaves no doubt.)
			notOwned = currentOffset == 0 && c.known && c.next >= 2
		}
		if notOwned {
			c.known = false
		}
		return
	}
	c.next = max(c.next, next)
	c.known = true
}

// maybeRefresh re-reads the partition count now and then, so partitions
// added to the topic get polled.
func (s *subscription) maybeRefresh(ctx context.Context, op string) {
	if s.t.cfg.clock.Now().UnixNano() < s.refreshAt.Load() {
		return
	}
	var td *iggcon.TopicDetails
	err := s.sess.call(ctx, op, func(c iggyClient) error {
		var err error
		td, err = c.GetTopic(s.t.stream, s.topicID)
		return err
	})
	s.refreshAt.Store(s.t.cfg.clock.Now().Add(s.t.cfg.partitionRefresh).UnixNano())
	if err == nil && td != nil {
		s.partitions.Store(td.PartitionsCount)
	}
}

// Commit stores offset as the group's position on partition. Iggy refuses
// a partition this member no longer owns (0.8: NotResolvedConsumer, which
// the SDK reports as its catch-all code 1; 0.9: ResourceNotFound, from its
// group fence); the subscription then checks ownership
// with a one-record poll and, when the partition is another member's,
// returns runtime.ErrPartitionLost so the consumer drops the commit instead
// of retrying it. An offset past the last record is refused as well.
func (s *subscription) Commit(ctx context.Context, partition uint32, offset uint64) error {
	op := s.opCommit
	if err := s.usable(op); err != nil {
		return err
	}
	err := s.sess.call(ctx, op, func(c iggyClient) error {
		return c.StoreConsumerOffset(s.consumer, s.t.stream, s.topicID, offset, &partition)
	})
	var ie ierror.IggyError
	if err == nil || !errors.As(err, &ie) || !maybeNotOwned(ie.Code()) {
		return err
	}
	if s.owns(ctx, partition, offset) {
		// The partition is this member's again (it moved away and back
		// between the commit and the check): a retry may pass, as with
		// Iggy 0.8's code 1, which reads as transient.
		if te, ok := errors.AsType[*runtime.Error](err); ok {
			te.Retryable = true
		}
		return err
	}
	s.forget(partition)
	return failed(op, fmt.Errorf("%w: partition %d of %s/%s", runtime.ErrPartitionLost, partition, s.topic, s.group))
}

// maybeNotOwned reports whether a commit refused with code may have been
// refused because the partition is another member's: Iggy 0.8 answers
// NotResolvedConsumer, which the SDK reports as its catch-all code 1; an
// Iggy 0.9 server answers ResourceNotFound (20) when its group fence
// refuses the member the partition.
func maybeNotOwned(code ierror.Code) bool {
	return code == ierror.ErrorCode || code == ierror.ResourceNotFoundCode
}

// forget drops partition's cursor after a commit there was refused: the
// consumer drops such a commit, relying on the next owner to start at the
// group's stored offset, and when that owner is this member again it must
// read from there too, or the records the refused commit covered are never
// committed by anyone.
func (s *subscription) forget(partition uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if int(partition) < len(s.cursors) {
		s.cursors[partition] = cursor{}
	}
}

// owns reports whether this member still owns partition, judged by a
// one-record group poll of it: Iggy answers a poll of another member's
// partition with an empty (0, 0) reply. For partition 0 that reply is also
// what an owned partition holding at most one record gives, so it counts
// as lost only when offset (a record this member read) proves the
// partition holds more. When in doubt, it owns.
func (s *subscription) owns(ctx context.Context, partition uint32, offset uint64) bool {
	var pm *iggcon.PolledMessage
	err := s.sess.call(ctx, s.opPoll, func(c iggyClient) error {
		var err error
		pm, err = c.PollMessages(s.t.stream, s.topicID, s.consumer, iggcon.OffsetPollingStrategy(offset), 1, false, &partition)
		return err
	})
	if err != nil || pm == nil || len(pm.Messages) > 0 {
		return true
	}
	if pm.PartitionId == vsr.ResyncPartition {
		return false // a VSR server's answer to a member polling another's partition
	}
	if partition != 0 {
		return pm.PartitionId == partition
	}
	return !(pm.CurrentOffset == 0 && offset >= 1)
}

// Leave removes the member from its group and closes its connection. When
// the connection is already gone (closed, lost or hung), so is the
// membership, and Leave only closes.
func (s *subscription) Leave(ctx context.Context) error {
	op := "leave " + s.topic + "/" + s.group
	if err := s.usable(op); err != nil {
		return err
	}
	err, _ := s.sess.callCurrent(ctx, op, func(c iggyClient) error {
		return c.LeaveConsumerGroup(s.t.stream, s.topicID, s.groupID)
	})
	if err != nil && !errors.Is(err, runtime.ErrDisconnected) && !errors.Is(err, ErrConnectionLost) && !errors.Is(err, ErrTimeout) {
		return err
	}
	s.state.Store(subLeft)
	s.sess.close()
	return nil
}

// Close drops the membership as a crashed process would: nothing is
// committed. It sends a leave (bounded by a second) before closing the
// connection, so the group rebalances at once rather than when the server
// notices the closed socket. Later calls fail with an error wrapping
// runtime.ErrDisconnected; closing twice is a no-op.
func (s *subscription) Close() error {
	if !s.state.CompareAndSwap(subActive, subClosed) {
		s.state.Store(subClosed)
		s.sess.close()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(closeLeaveTimeout, s.t.cfg.callTimeout))
	defer cancel()
	_, _ = s.sess.callCurrent(ctx, "close", func(c iggyClient) error {
		return c.LeaveConsumerGroup(s.t.stream, s.topicID, s.groupID)
	})
	s.sess.close()
	return nil
}
