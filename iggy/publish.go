package iggy

import (
	"context"
	"errors"
	"fmt"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggy/internal/vsr"
	"github.com/lasergo/laser/runtime"
)

// locateWindow is how many records one backward step of the offset search
// reads, and locateSteps how many steps it takes before giving up.
const (
	locateWindow = 256
	locateSteps  = 64
)

// errLocate reports a published batch whose offsets could not be found: the
// records were appended, but Publish cannot say where.
var errLocate = errors.New("iggy: published records not found in their partition")

// publishBatch is the records of one Publish call bound for one partition.
type publishBatch struct {
	partition uint32
	index     []int // positions in the caller's slice
	msgs      []iggcon.IggyMessage
	ids       []iggcon.MessageID
}

// Publish appends records to topic and returns where each landed. A keyed
// record goes where Iggy's messages-key partitioning would put it
// (xxHash32 of the key, seed 0, modulo the partition count), computed here
// so the partition is known without asking; an unkeyed one follows this
// transport's round robin. The records of one partition are sent as one
// batch with an explicit partition id.
//
// Iggy 0.8 does not report the offsets it assigned, so each message gets an
// id unique to this transport and Publish reads back the tail of the
// partition to find them: one small read when no one else appended in
// between, a backward search otherwise. That read costs a round trip per
// partition and publishes are serialized per transport; Append skips both
// when the positions are not needed. A call spanning several partitions
// is not atomic: when a later batch fails, earlier ones stay published.
func (t *Transport) Publish(ctx context.Context, topic string, records ...runtime.Outgoing) ([]runtime.Position, error) {
	op := "publish " + topic
	if len(records) == 0 {
		return nil, nil
	}
	ti, batches, err := t.prepare(ctx, op, topic, records)
	if err != nil {
		return nil, err
	}
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	pos := make([]runtime.Position, len(records))
	for _, b := range batches {
		if err := t.send(ctx, op, ti, b); err != nil {
			return nil, err
		}
		first, err := t.locate(ctx, op, ti, b.partition, b.ids)
		if err != nil {
			return nil, err
		}
		for j, i := range b.index {
			pos[i] = runtime.Position{Partition: b.partition, Offset: first + uint64(j)}
		}
	}
	return pos, nil
}

// Append publishes records like Publish but does not find out where they
// landed, which saves Publish's read-back of each partition's tail: one
// send per partition the records go to, and no lock shared with other
// publishers. Callers that need positions use Publish.
func (t *Transport) Append(ctx context.Context, topic string, records ...runtime.Outgoing) error {
	op := "publish " + topic
	if len(records) == 0 {
		return nil
	}
	ti, batches, err := t.prepare(ctx, op, topic, records)
	if err != nil {
		return err
	}
	for _, b := range batches {
		if err := t.send(ctx, op, ti, b); err != nil {
			return err
		}
	}
	return nil
}

// prepare resolves the topic and groups records into per-partition batches.
func (t *Transport) prepare(ctx context.Context, op, topic string, records []runtime.Outgoing) (*topicInfo, []*publishBatch, error) {
	ti, err := t.topic(ctx, op, topic, false)
	if err != nil {
		return nil, nil, err
	}
	// Keys are placed client-side with the partition count, so re-read it
	// now and then: partitions added to the topic would otherwise split a
	// conversation between the old and the new modulus for good.
	if t.cfg.clock.Now().UnixNano() >= ti.refreshAt.Load() {
		if ti, err = t.topic(ctx, op, topic, true); err != nil {
			return nil, nil, err
		}
	}
	batches, err := t.batches(ti, records)
	if err == nil && t.cs.protocol == protocolVSR {
		batches, err = splitToFit(batches, vsrSendRoom(t.stream, ti.ident))
	}
	if err != nil {
		return nil, nil, failed(op, err)
	}
	return ti, batches, nil
}

// vsrSendRoom is how many bytes of messages (each with its message header)
// one VSR send frame to stream and topic holds.
func vsrSendRoom(stream, topic iggcon.Identifier) int {
	sid, _ := stream.MarshalBinary()
	tid, _ := topic.MarshalBinary()
	return vsr.MaxFrameSize - vsr.HeaderSize - vsr.SendSize(len(sid), len(tid), nil)
}

// vsrMessageSize is the bytes m takes in a VSR send.
func vsrMessageSize(m *iggcon.IggyMessage) int {
	return vsr.MessageHeaderSize + len(m.Payload) + len(m.UserHeaders)
}

// splitToFit splits batches into batches of the same partition whose
// messages take at most room bytes, keeping their order, since a frame over
// the server's maximum can never be sent. A record that alone takes more is
// an error naming its size and the limit.
func splitToFit(batches []*publishBatch, room int) ([]*publishBatch, error) {
	out := batches[:0:0]
	for _, b := range batches {
		start, size := 0, 0
		for j := range b.msgs {
			n := vsrMessageSize(&b.msgs[j])
			if n > room {
				return nil, fmt.Errorf("record %d: %d bytes with its message header, over the %d bytes one send holds (the VSR frame limit is %d bytes): %w",
					b.index[j], n, room, vsr.MaxFrameSize, ierror.ErrTooBigMessagePayload)
			}
			if size+n > room {
				out = append(out, b.slice(start, j))
				start, size = j, 0
			}
			size += n
		}
		if start == 0 {
			out = append(out, b)
		} else {
			out = append(out, b.slice(start, len(b.msgs)))
		}
	}
	return out, nil
}

// slice is the batch of b's records i..j.
func (b *publishBatch) slice(i, j int) *publishBatch {
	return &publishBatch{partition: b.partition, index: b.index[i:j:j], msgs: b.msgs[i:j:j], ids: b.ids[i:j:j]}
}

// send sends one partition's batch.
func (t *Transport) send(ctx context.Context, op string, ti *topicInfo, b *publishBatch) error {
	return t.ctl.call(ctx, op, func(c iggyClient) error {
		return c.SendMessages(t.stream, ti.ident, iggcon.PartitionId(b.partition), b.msgs)
	})
}

// batches groups records by partition in first-seen order, building the
// SDK messages.
func (t *Transport) batches(ti *topicInfo, records []runtime.Outgoing) ([]*publishBatch, error) {
	var out []*publishBatch
	byPart := make(map[uint32]*publishBatch, 1)
	// Every record's user headers go into one buffer.
	size := 0
	for i := range records {
		size += headerBytesLen(records[i].Headers)
	}
	hbuf := make([]byte, 0, size)
	for i := range records {
		r := &records[i]
		start := len(hbuf)
		var err error
		if hbuf, err = appendHeaderBytes(hbuf, r.Headers); err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		id := iggcon.MessageID(t.newMessageID())
		m, err := iggcon.NewIggyMessage(r.Payload, iggcon.WithID(id))
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		if n := len(hbuf) - start; n > 0 {
			if n > iggcon.MaxUserHeadersSize {
				return nil, fmt.Errorf("record %d: %w", i, ierror.ErrTooBigUserHeaders)
			}
			m.UserHeaders = hbuf[start:len(hbuf):len(hbuf)]
			m.Header.UserHeaderLength = uint32(n)
		}
		p := partitionFor(ti, r.Key)
		b, ok := byPart[p]
		if !ok {
			// The first partition's batch usually takes every record.
			b = &publishBatch{partition: p, index: make([]int, 0, len(records)),
				msgs: make([]iggcon.IggyMessage, 0, len(records)), ids: make([]iggcon.MessageID, 0, len(records))}
			if len(out) > 0 {
				b = &publishBatch{partition: p}
			}
			byPart[p] = b
			out = append(out, b)
		}
		b.index = append(b.index, i)
		b.msgs = append(b.msgs, m)
		b.ids = append(b.ids, id)
	}
	return out, nil
}

// locate returns the offset of the first message of a batch just sent.
func (t *Transport) locate(ctx context.Context, op string, ti *topicInfo, partition uint32, ids []iggcon.MessageID) (uint64, error) {
	poll := func(strategy iggcon.PollingStrategy, count uint32) (*iggcon.PolledMessage, error) {
		var pm *iggcon.PolledMessage
		err := t.ctl.call(ctx, op, func(c iggyClient) error {
			var err error
			pm, err = c.PollMessages(t.stream, ti.ident, iggcon.DefaultConsumer(), strategy, count, false, &partition)
			return err
		})
		if err != nil {
			// A cancelled caller returns while the call still runs aside and
			// may yet write pm: only a completed call's pm may be read.
			return nil, err
		}
		return pm, nil
	}
	pm, err := poll(iggcon.LastPollingStrategy(), 1)
	if err != nil {
		return 0, err
	}
	k := uint64(len(ids))
	if len(pm.Messages) == 1 && pm.Messages[0].Header.Id == ids[len(ids)-1] && pm.Messages[0].Header.Offset+1 >= k {
		return pm.Messages[0].Header.Offset + 1 - k, nil
	}
	// Someone appended after us: search backwards from the end.
	index := make(map[iggcon.MessageID]uint64, len(ids))
	for j, id := range ids {
		index[id] = uint64(j)
	}
	window := max(uint64(locateWindow), k)
	end := pm.CurrentOffset + 1
	for range locateSteps {
		if end == 0 {
			break
		}
		start := end - min(end, window)
		pm, err := poll(iggcon.OffsetPollingStrategy(start), uint32(end-start))
		if err != nil {
			return 0, err
		}
		for _, m := range pm.Messages {
			if j, ok := index[m.Header.Id]; ok && m.Header.Offset >= j {
				return m.Header.Offset - j, nil
			}
		}
		end = start
	}
	return 0, failed(op, fmt.Errorf("%w: partition %d, %d records", errLocate, partition, len(ids)))
}
