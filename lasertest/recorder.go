package lasertest

import (
	"context"
	"fmt"
	"sync"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// recorder is a transport that keeps what is published in memory, one
// partition per topic, and has no consumer groups: it is where Run's
// handler publishes.
type recorder struct {
	mu      sync.Mutex
	records []record
	next    map[string]uint64
}

// since returns the records published after the first n.
func (r *recorder) since(n int) []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.records[n:]...)
}

type record struct {
	topic string
	runtime.Incoming
}

func (r *recorder) EnsureTopics(context.Context, uint32, ...string) error { return nil }

func (r *recorder) Publish(_ context.Context, topic string, records ...runtime.Outgoing) ([]runtime.Position, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == nil {
		r.next = map[string]uint64{}
	}
	encoded := make([]wire.EncodedHeaders, len(records))
	for i, o := range records {
		var err error
		if encoded[i], err = o.Headers.Encode(); err != nil {
			return nil, fmt.Errorf("lasertest: publish %s: record %d: %w", topic, i, err)
		}
	}
	pos := make([]runtime.Position, len(records))
	for i, o := range records {
		pos[i] = runtime.Position{Offset: r.next[topic]}
		r.next[topic]++
		r.records = append(r.records, record{topic: topic, Incoming: runtime.Incoming{Position: pos[i], Headers: encoded[i], Payload: o.Payload}})
	}
	return pos, nil
}

func (r *recorder) Join(context.Context, string, string) (runtime.Subscription, error) {
	return nil, &runtime.Error{Code: runtime.CodeUnsupported, Msg: "lasertest records what a handler publishes and has no consumer groups"}
}

func (r *recorder) StoredOffset(context.Context, string, string, uint32) (uint64, bool, error) {
	return 0, false, nil
}

func (r *recorder) ReadRange(_ context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []runtime.Incoming
	for _, rec := range r.records {
		if rec.topic == topic && partition == 0 && rec.Offset >= offset && len(out) < count {
			out = append(out, rec.Incoming)
		}
	}
	return out, nil
}

func (r *recorder) NextOffset(_ context.Context, topic string, _ uint32) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next[topic], nil
}

func (r *recorder) Partitions(context.Context, string) (uint32, error) { return 1, nil }

func (r *recorder) TopicIDs(context.Context, string) (uint32, uint32, error) { return 1, 1, nil }
