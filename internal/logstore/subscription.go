package logstore

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/runtime"
)

// Subscription is one group member's view of a topic, returned by Log.Join.
//
// It reads through a local cursor per owned partition. A cursor starts at
// the group's stored offset + 1 (0 when nothing is stored) whenever the
// partition is newly assigned to this member, and moves only by Poll; Poll
// never commits.
type Subscription struct {
	topic  *Topic
	group  *Group
	member uint64

	// Guarded by topic.mu.
	state   subState
	cursors map[uint32]cursor
	gen     uint64 // group generation the cursors were last reconciled with
	next    int    // rotation index: where the next Poll starts
}

type subState uint8

const (
	subActive subState = iota
	subLeft
	subClosed
)

// cursor is the next offset to read and the ownership generation it belongs to.
type cursor struct {
	next  uint64
	since uint64
}

var _ runtime.Subscription = (*Subscription)(nil)

// Member returns the member id this subscription holds in its group.
func (s *Subscription) Member() uint64 { return s.member }

// usableLocked explains why the subscription cannot be used, if it cannot.
func (s *Subscription) usableLocked() error {
	switch s.state {
	case subClosed:
		return fmt.Errorf("embedlog: subscription to %q/%q is closed: %w", s.topic.name, s.group.name, runtime.ErrDisconnected)
	case subLeft:
		return errorf(ErrNotMember, "embedlog: subscription left consumer group %q of topic %q", s.group.name, s.topic.name)
	}
	if err := s.group.liveLocked(); err != nil {
		return err
	}
	if _, ok := s.group.assignment[s.member]; !ok {
		return errorf(ErrNotMember, "embedlog: member %d was removed from consumer group %q of topic %q", s.member, s.group.name, s.topic.name)
	}
	return nil
}

// ownedLocked returns the owned partitions after reconciling cursors with
// the current assignment.
func (s *Subscription) ownedLocked() []uint32 {
	g := s.group
	owned := g.assignment[s.member]
	if s.gen == g.generation {
		return owned
	}
	s.gen = g.generation
	for p := range s.cursors {
		if !g.ownsLocked(s.member, p) {
			delete(s.cursors, p)
		}
	}
	for _, p := range owned {
		since := g.owners[p].since
		if c, ok := s.cursors[p]; ok && c.since == since {
			continue
		}
		start := uint64(0)
		if off, ok := s.topic.offsets[offsetKey{g.key, p}]; ok {
			start = off + 1
		}
		s.cursors[p] = cursor{next: start, since: since}
	}
	return owned
}

// Poll returns up to max records from the owned partitions without waiting
// or committing. Each call starts one partition further along, so a busy
// partition cannot starve the others.
func (s *Subscription) Poll(ctx context.Context, max int) ([]runtime.Incoming, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedlog: poll: %w", err)
	}
	if max < 0 {
		return nil, errorf(ErrBadCount, "embedlog: poll of %d records", max)
	}
	t := s.topic
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return nil, err
	}
	owned := s.ownedLocked()
	if len(owned) == 0 || max == 0 {
		return nil, nil
	}
	start := s.next % len(owned)
	s.next = start + 1

	// First pass: pick the windows, so the output and the bytes are
	// allocated once.
	type pick struct {
		p    uint32
		recs []Record
	}
	var small [8]pick
	picks := small[:0]
	total := 0
	for i := 0; i < len(owned) && total < max; i++ {
		p := owned[(start+i)%len(owned)]
		w := window(t.parts[p].records, s.cursors[p].next, max-total)
		if len(w) == 0 {
			continue
		}
		picks = append(picks, pick{p, w})
		total += len(w)
	}
	if total == 0 {
		return nil, nil
	}
	size := 0
	for _, pk := range picks {
		size += arenaSize(pk.recs)
	}
	data := make(byteArena, 0, size)
	out := make([]runtime.Incoming, 0, total)
	for _, pk := range picks {
		out = appendIncoming(out, &data, pk.p, pk.recs)
		c := s.cursors[pk.p]
		c.next += uint64(len(pk.recs))
		s.cursors[pk.p] = c
	}
	return out, nil
}

// Commit stores offset as the group's position on partition; the member
// must own the partition (ErrNotOwner otherwise, Iggy's 3022) and the offset
// must exist (ErrInvalidOffset).
func (s *Subscription) Commit(ctx context.Context, partition uint32, offset uint64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("embedlog: commit: %w", err)
	}
	t := s.topic
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	if _, err := t.partitionLocked(partition); err != nil {
		return err
	}
	if !s.group.ownsLocked(s.member, partition) {
		return errorf(ErrNotOwner, "embedlog: member %d of consumer group %q does not own partition %d of topic %q", s.member, s.group.name, partition, t.name)
	}
	return t.storeOffsetLocked(s.group.key, partition, offset)
}

// Leave removes the member from its group, handing its partitions to the
// others.
func (s *Subscription) Leave(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("embedlog: leave: %w", err)
	}
	t := s.topic
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := s.usableLocked(); err != nil {
		return err
	}
	s.state = subLeft
	return s.group.leaveLocked(s.member)
}

// Close drops the membership like a dropped connection; later calls fail
// with an error wrapping runtime.ErrDisconnected. Closing twice is a no-op.
func (s *Subscription) Close() error {
	t := s.topic
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.state == subClosed {
		return nil
	}
	if s.state == subActive && s.group.liveLocked() == nil {
		_ = s.group.leaveLocked(s.member) // fails only when someone else removed the member already
	}
	s.state = subClosed
	t.notifyLocked()
	return nil
}

// Wait blocks until Poll would return records, the subscription can no
// longer be used (its error is returned), or ctx ends.
func (s *Subscription) Wait(ctx context.Context) error {
	t := s.topic
	for {
		t.mu.Lock()
		if err := s.usableLocked(); err != nil {
			t.mu.Unlock()
			return err
		}
		ready := false
		for _, p := range s.ownedLocked() {
			if s.cursors[p].next < uint64(len(t.parts[p].records)) {
				ready = true
				break
			}
		}
		t.watched = true
		ch := t.changed
		t.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("embedlog: wait: %w", ctx.Err())
		}
	}
}

// Changed returns a channel closed at the topic's next append or
// rebalance, so an idle consumer polls at once instead of at its next poll
// interval (runtime.ChangeNotifier).
func (s *Subscription) Changed() <-chan struct{} { return s.topic.Changed() }

var _ runtime.ChangeNotifier = (*Subscription)(nil)
