package runtime

import (
	"strconv"

	"github.com/lasergo/laser/wire"
)

// The modes of Concurrency differ only in what orders records (a key), in
// how many handlers run at once and in how many keys get a worker lane;
// the one scheduler (scheduler.go) queues each record behind its key and
// handles the records of a key one at a time, in log order. A new mode is
// a new scheduleKey.

// PerConversation runs up to n handlers at once, on one partition or many:
// the records of one conversation are handled strictly one at a time in
// log order, records of different conversations in parallel. Records
// without a conversation header that names one are ordered by their
// partition instead (one at a time per partition, as PerPartition).
// Offsets are committed per partition up to the newest record below which
// every record was handled, skipped or parked. It suits handlers that wait
// on I/O (a model, an API): throughput grows with n instead of with the
// partition count. See docs/concurrency.md.
func PerConversation(n int) Concurrency { return Concurrency{Handlers: max(n, 1)} }

// OrderedBy returns c ordering records by key instead of by conversation:
// records with the same key are handled one at a time in log order (per
// entity: an order id, a user). key runs for every decoded record, before
// any gate, on the intake goroutine and again on a worker reading a hot
// key's backlog back from the log, so it must be fast, safe for concurrent
// use, and must not keep m; an empty key (or a panic) orders the record by
// its partition, as does a record that does not decode. Only
// PerConversation honours it.
func (c Concurrency) OrderedBy(key func(m *Message) string) Concurrency {
	c.key = &scheduleKey{
		of: func(rec *Incoming, m *Message) orderKey {
			if m != nil {
				if name := key(m); name != "" {
					return orderKey{name: name, byName: true}
				}
			}
			return orderKey{partition: rec.Partition}
		},
		message: true,
		fair:    true,
		turn:    1,
	}
	return c
}

// String names the mode: "serial", "lanes=4", "perconversation=256".
func (c Concurrency) String() string {
	switch {
	case c.Handlers > 0:
		return "perconversation=" + strconv.Itoa(c.Handlers)
	case c.Lanes > 0:
		return "lanes=" + strconv.Itoa(c.Lanes)
	}
	return "serial"
}

// handlers is how many records of different keys c handles at once.
func (c Concurrency) handlers() int {
	switch {
	case c.Handlers > 0:
		return c.Handlers
	case c.Lanes > 0:
		return c.Lanes
	}
	return 1
}

// lanes is how many keys hold a worker lane at once under c: a key with
// nothing queued or running gives its lane up to one that needs it, and
// the records of a key without one are handled inline by intake, on the
// poller's goroutine. Serial has none (every partition is handled inline,
// with no handoff), PerPartition(n) has n; under PerConversation every
// key is scheduled on the workers (-1).
func (c Concurrency) lanes() int {
	switch {
	case c.Handlers > 0:
		return -1
	case c.Lanes > 0:
		return c.Lanes
	}
	return 0
}

// scheduleKey returns what orders records under c: the partition for
// Serial and PerPartition, the conversation (or OrderedBy's key) for
// PerConversation.
func (c Concurrency) scheduleKey() *scheduleKey {
	switch {
	case c.Handlers > 0 && c.key != nil:
		return c.key
	case c.Handlers > 0:
		return byConversation
	}
	return byPartition
}

// scheduleKey is what orders records: the records of one key are handled
// one at a time, in log order; records of different keys in parallel.
type scheduleKey struct {
	// of returns the key of rec. m is rec decoded when message is set (nil
	// when it did not decode); nil otherwise, so a key read from the
	// record's headers costs no decoding: intake reads the key of every
	// record it polls, including those it leaves to be read again.
	of func(rec *Incoming, m *Message) orderKey
	// message makes intake decode each record before it reads its key.
	message bool
	// fair bounds what one key may hold of the queue bound (a share):
	// intake leaves further records of the key in the log, to be read
	// again once the key has caught up, so a hot key cannot hold the
	// others up. A key as coarse as the partition gains nothing from it
	// (every record of the partition has it): intake waits for room
	// instead, and a full bound stalls every partition.
	fair bool
	// turn is how many queued records of a key a worker takes at once
	// before the key goes behind the others that wait (0: all it has).
	turn int
	// headers is set when of reads the record's headers (and partition)
	// alone: a record whose header bytes equal those of the record
	// before on its partition has that record's key, found by a compare
	// rather than a parse.
	headers bool
}

// orderKey is the unit of order of a record: a conversation, a name of a
// custom key, or (neither) its partition.
type orderKey struct {
	conv      wire.ID
	name      string
	partition uint32
	byName    bool
}

var (
	// byPartition orders records by partition: Serial (one handler) and
	// PerPartition(n), whose workers take all a partition has queued in
	// one turn.
	byPartition = &scheduleKey{
		of:   func(rec *Incoming, _ *Message) orderKey { return orderKey{partition: rec.Partition} },
		turn: 0,
	}
	// byConversation orders records by the conversation their
	// gen_ai.conversation.id header names (plain and AGDX records carry
	// it), read in place without decoding the record.
	byConversation = &scheduleKey{
		of: func(rec *Incoming, _ *Message) orderKey {
			if c, ok := wire.HeaderConversation(rec.Headers); ok && !c.IsZero() {
				return orderKey{conv: c}
			}
			return orderKey{partition: rec.Partition}
		},
		fair:    true,
		turn:    1,
		headers: true,
	}
)

// sameKeyInput reports whether a key that reads only the headers and the
// partition (scheduleKey.headers) gives b the key of a: same partition,
// same header bytes.
func sameKeyInput(a, b *Incoming) bool {
	return a.Partition == b.Partition && string(a.Headers.Bytes()) == string(b.Headers.Bytes())
}
