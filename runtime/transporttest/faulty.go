package transporttest

import (
	"context"
	"fmt"
	"sync"

	"github.com/lasergo/laser/runtime"
)

// Faulty wraps a runtime.Transport with fault hooks and counters, so tests
// can make publishes, polls, commits and joins fail on cue and see what the
// code under test committed. It is safe for concurrent use; hooks run
// outside its lock, so a hook may call back into the Faulty.
type Faulty struct {
	inner runtime.Transport

	mu              sync.Mutex
	failPublish     func(topic string) error
	failCommit      func(partition uint32, offset uint64) error
	failPoll        func() error
	failJoin        func(topic, group string) error
	disconnected    bool
	subs            map[*faultySub]struct{}
	published       map[string]int
	publishAttempts map[string]int
	commits         []Commit
}

// Commit is one successful commit seen by a Faulty.
type Commit struct {
	Topic     string
	Group     string
	Partition uint32
	Offset    uint64
}

var _ runtime.Transport = (*Faulty)(nil)

// NewFaulty wraps inner with no faults armed.
func NewFaulty(inner runtime.Transport) *Faulty {
	return &Faulty{
		inner:           inner,
		subs:            make(map[*faultySub]struct{}),
		published:       make(map[string]int),
		publishAttempts: make(map[string]int),
	}
}

// FailPublish makes Publish return fn's error when it is not nil; nil
// disarms the hook. Failed publishes reach nothing.
func (f *Faulty) FailPublish(fn func(topic string) error) { f.set(func() { f.failPublish = fn }) }

// FailCommit makes Commit return fn's error when it is not nil; nil disarms
// the hook. Failed commits store nothing.
func (f *Faulty) FailCommit(fn func(partition uint32, offset uint64) error) {
	f.set(func() { f.failCommit = fn })
}

// FailPoll makes Poll return fn's error when it is not nil; nil disarms the
// hook. A failed poll consumes no records.
func (f *Faulty) FailPoll(fn func() error) { f.set(func() { f.failPoll = fn }) }

// FailJoin makes Join return fn's error when it is not nil; nil disarms the
// hook.
func (f *Faulty) FailJoin(fn func(topic, group string) error) { f.set(func() { f.failJoin = fn }) }

func (f *Faulty) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

// Disconnect simulates a lost connection: every operation fails with an
// error wrapping runtime.ErrDisconnected until Reconnect, and every open
// subscription is dropped the way a server drops a vanished client (its
// membership ends, nothing is committed), so it keeps failing after
// Reconnect; callers must Join again.
func (f *Faulty) Disconnect() {
	f.mu.Lock()
	f.disconnected = true
	subs := make([]*faultySub, 0, len(f.subs))
	for s := range f.subs {
		subs = append(subs, s)
	}
	clear(f.subs)
	f.mu.Unlock()
	for _, s := range subs {
		s.drop()
	}
}

// Reconnect ends a Disconnect; subscriptions dropped by it stay dropped.
func (f *Faulty) Reconnect() { f.set(func() { f.disconnected = false }) }

// Published returns how many records were published to topic successfully.
func (f *Faulty) Published(topic string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.published[topic]
}

// PublishAttempts returns how many Publish calls named topic, failed ones
// included.
func (f *Faulty) PublishAttempts(topic string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.publishAttempts[topic]
}

// Commits returns every successful commit in the order they happened.
func (f *Faulty) Commits() []Commit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Commit(nil), f.commits...)
}

// CommitCount returns how many commits succeeded.
func (f *Faulty) CommitCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.commits)
}

func disconnectedErr(op string) error {
	return fmt.Errorf("transporttest: %s: %w", op, runtime.ErrDisconnected)
}

// check returns the disconnect error for op, if the Faulty is disconnected.
func (f *Faulty) check(op string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.disconnected {
		return disconnectedErr(op)
	}
	return nil
}

// EnsureTopics forwards to the wrapped transport.
func (f *Faulty) EnsureTopics(ctx context.Context, partitions uint32, topics ...string) error {
	if err := f.check("ensure topics"); err != nil {
		return err
	}
	return f.inner.EnsureTopics(ctx, partitions, topics...)
}

// Publish runs the publish hook, then forwards.
func (f *Faulty) Publish(ctx context.Context, topic string, records ...runtime.Outgoing) ([]runtime.Position, error) {
	f.mu.Lock()
	f.publishAttempts[topic]++
	hook, down := f.failPublish, f.disconnected
	f.mu.Unlock()
	if down {
		return nil, disconnectedErr("publish " + topic)
	}
	if hook != nil {
		if err := hook(topic); err != nil {
			return nil, err
		}
	}
	pos, err := f.inner.Publish(ctx, topic, records...)
	if err == nil {
		f.mu.Lock()
		f.published[topic] += len(records)
		f.mu.Unlock()
	}
	return pos, err
}

// Join runs the join hook, then forwards and wraps the subscription.
func (f *Faulty) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	f.mu.Lock()
	hook, down := f.failJoin, f.disconnected
	f.mu.Unlock()
	if down {
		return nil, disconnectedErr("join " + topic)
	}
	if hook != nil {
		if err := hook(topic, group); err != nil {
			return nil, err
		}
	}
	inner, err := f.inner.Join(ctx, topic, group)
	if err != nil {
		return nil, err
	}
	s := &faultySub{f: f, inner: inner, topic: topic, group: group}
	f.mu.Lock()
	down = f.disconnected
	if !down {
		f.subs[s] = struct{}{}
	}
	f.mu.Unlock()
	if down { // a Disconnect raced the join: the membership is lost too
		s.drop()
	}
	return s, nil
}

// StoredOffset forwards to the wrapped transport.
func (f *Faulty) StoredOffset(ctx context.Context, topic, group string, partition uint32) (uint64, bool, error) {
	if err := f.check("stored offset " + topic); err != nil {
		return 0, false, err
	}
	return f.inner.StoredOffset(ctx, topic, group, partition)
}

// ReadRange forwards to the wrapped transport.
func (f *Faulty) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	if err := f.check("read " + topic); err != nil {
		return nil, err
	}
	return f.inner.ReadRange(ctx, topic, partition, offset, count)
}

// NextOffset forwards to the wrapped transport.
func (f *Faulty) NextOffset(ctx context.Context, topic string, partition uint32) (uint64, error) {
	if err := f.check("next offset " + topic); err != nil {
		return 0, err
	}
	return f.inner.NextOffset(ctx, topic, partition)
}

// Partitions forwards to the wrapped transport.
func (f *Faulty) Partitions(ctx context.Context, topic string) (uint32, error) {
	if err := f.check("partitions " + topic); err != nil {
		return 0, err
	}
	return f.inner.Partitions(ctx, topic)
}

// TopicIDs forwards to the wrapped transport.
func (f *Faulty) TopicIDs(ctx context.Context, topic string) (uint32, uint32, error) {
	if err := f.check("topic ids " + topic); err != nil {
		return 0, 0, err
	}
	return f.inner.TopicIDs(ctx, topic)
}

// faultySub wraps a subscription so polls and commits see the hooks.
type faultySub struct {
	f            *Faulty
	inner        runtime.Subscription
	topic, group string

	mu      sync.Mutex
	dropped bool
}

// drop closes the inner subscription the way a lost connection ends it.
func (s *faultySub) drop() {
	s.mu.Lock()
	already := s.dropped
	s.dropped = true
	s.mu.Unlock()
	if !already {
		_ = s.inner.Close() // the membership is gone either way
	}
}

func (s *faultySub) check(op string) error {
	s.mu.Lock()
	dropped := s.dropped
	s.mu.Unlock()
	if dropped {
		return disconnectedErr(op)
	}
	return s.f.check(op)
}

func (s *faultySub) Poll(ctx context.Context, max int) ([]runtime.Incoming, error) {
	if err := s.check("poll " + s.topic); err != nil {
		return nil, err
	}
	s.f.mu.Lock()
	hook := s.f.failPoll
	s.f.mu.Unlock()
	if hook != nil {
		if err := hook(); err != nil {
			return nil, err
		}
	}
	return s.inner.Poll(ctx, max)
}

func (s *faultySub) Commit(ctx context.Context, partition uint32, offset uint64) error {
	if err := s.check("commit " + s.topic); err != nil {
		return err
	}
	s.f.mu.Lock()
	hook := s.f.failCommit
	s.f.mu.Unlock()
	if hook != nil {
		if err := hook(partition, offset); err != nil {
			return err
		}
	}
	if err := s.inner.Commit(ctx, partition, offset); err != nil {
		return err
	}
	s.f.mu.Lock()
	s.f.commits = append(s.f.commits, Commit{Topic: s.topic, Group: s.group, Partition: partition, Offset: offset})
	s.f.mu.Unlock()
	return nil
}

func (s *faultySub) Leave(ctx context.Context) error {
	if err := s.check("leave " + s.topic); err != nil {
		return err
	}
	s.forget()
	return s.inner.Leave(ctx)
}

func (s *faultySub) Close() error {
	s.mu.Lock()
	already := s.dropped
	s.dropped = true
	s.mu.Unlock()
	s.forget()
	if already {
		return nil
	}
	return s.inner.Close()
}

func (s *faultySub) forget() {
	s.f.mu.Lock()
	delete(s.f.subs, s)
	s.f.mu.Unlock()
}
