package humaninput

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The bounds of a List unless its options say otherwise.
const (
	// DefaultMaxRequests is how many pending requests a List holds.
	DefaultMaxRequests = 1000
	// DefaultMaxBytes is how many record bytes the held requests may take.
	DefaultMaxBytes = 16 << 20
)

// ListOptions says what List folds, how it judges answers and how much it
// holds.
type ListOptions struct {
	// Topic is the requests' topic. Default agent.human_input.
	Topic string
	// Now judges deadlines: a request whose deadline is before it is no
	// longer pending, since its asker stopped waiting. Zero means time.Now().
	Now time.Time
	// Verifier, when set, judges answers as an asker under it does: only a
	// verified answer from an approver of the request counts (see the
	// package doc); any other leaves the request pending and is counted in
	// Listing.RefusedAnswers. Pass the askers' verifier.
	Verifier runtime.Verifier
	// MaxRequests bounds the requests held at once. Default
	// DefaultMaxRequests.
	MaxRequests int
	// MaxBytes bounds the record bytes of the requests held at once.
	// Default DefaultMaxBytes.
	MaxBytes int
}

// Listing is what List found.
type Listing struct {
	// Pending are the requests without a counted answer whose askers still
	// wait, oldest first per partition.
	Pending []*runtime.Message
	// RefusedAnswers counts answers to pending requests that did not count:
	// unverified, or signed by someone who may not answer the request.
	RefusedAnswers int
	// Unlisted counts requests List did not hold: those arriving while
	// MaxRequests or MaxBytes were reached (some may have been answered
	// later) and second requests under a correlation already held.
	Unlisted int
	// Shared counts, per correlation of a pending request, the other
	// requests that came under the same correlation. An answer names only
	// the correlation, so it would answer whichever request the asker waits
	// on, whatever prompt the person read: tools must not answer such a
	// correlation (laser approvals and the console refuse to).
	Shared map[wire.ID]int
}

// List folds topic into the requests still pending, as a stream: it holds
// only the pending requests, within the bounds of opts, so a topic flooded
// with junk costs a bounded amount of memory and the flood is reported in
// the Listing instead of listed.
func List(ctx context.Context, t runtime.Transport, opts ListOptions) (*Listing, error) {
	topic := cmp.Or(opts.Topic, runtime.TopicHumanInput)
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	f := &pendingFold{opts: opts, now: uint64(now.UnixMicro()), held: map[wire.ID]int{}, shared: map[wire.ID]int{},
		maxRequests: positive(opts.MaxRequests, DefaultMaxRequests), maxBytes: positive(opts.MaxBytes, DefaultMaxBytes)}
	if _, err := logscan.Topic(ctx, t, topic, nil, func(rec *runtime.Incoming) { f.add(topic, rec) }); err != nil {
		return nil, fmt.Errorf("humaninput: %w", err)
	}
	out := &Listing{RefusedAnswers: f.refused, Unlisted: f.unlisted, Shared: f.shared}
	for _, m := range f.order {
		if m != nil {
			out.Pending = append(out.Pending, m)
		}
	}
	return out, nil
}

// Pending returns the requests on topic (default agent.human_input) that
// have no answer yet and whose asker still waits (their deadline has not
// passed), oldest first per partition, within List's default bounds. It
// counts every answer: under a verifier, use List with it.
func Pending(ctx context.Context, t runtime.Transport, topic string) ([]*runtime.Message, error) {
	return PendingAt(ctx, t, topic, time.Now())
}

// PendingAt is Pending judged at now: a request whose deadline is before
// now is no longer pending, since its asker stopped waiting.
func PendingAt(ctx context.Context, t runtime.Transport, topic string, now time.Time) ([]*runtime.Message, error) {
	l, err := List(ctx, t, ListOptions{Topic: topic, Now: now})
	if err != nil {
		return nil, err
	}
	return l.Pending, nil
}

func positive(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// pendingFold is List's state while it reads: the held requests in arrival
// order (answered ones nil until the order is compacted) and the counts.
type pendingFold struct {
	opts                  ListOptions
	now                   uint64
	maxRequests, maxBytes int

	order    []*runtime.Message
	held     map[wire.ID]int // correlation → index in order
	shared   map[wire.ID]int // correlation of a held request → other requests under it
	bytes    int
	refused  int
	unlisted int
}

func (f *pendingFold) add(topic string, rec *runtime.Incoming) {
	m, err := runtime.DecodeRecord(topic, rec, 0)
	if err != nil || m.Envelope == nil || m.Envelope.Correlation == nil {
		return
	}
	corr := *m.Envelope.Correlation
	switch m.Envelope.Kind {
	case wire.KindCommand:
		if d := m.Envelope.DeadlineMicros; d != nil && *d < f.now {
			return // nobody waits for it
		}
		size := len(rec.Payload)
		if _, dup := f.held[corr]; dup {
			f.shared[corr]++ // bounded: only held correlations count
			f.unlisted++
			return
		}
		if len(f.held) >= f.maxRequests || f.bytes+size > f.maxBytes {
			f.unlisted++
			return
		}
		f.held[corr] = len(f.order)
		f.order = append(f.order, m)
		f.bytes += size
	case wire.KindResponse, wire.KindError:
		i, ok := f.held[corr]
		if !ok {
			return // an answer to nothing held costs nothing
		}
		if f.opts.Verifier != nil && !mayAnswer(f.order[i], m, f.opts.Verifier) {
			f.refused++
			return
		}
		f.bytes -= len(f.order[i].Payload)
		f.order[i] = nil
		delete(f.held, corr)
		delete(f.shared, corr)
		if len(f.order) > 2*len(f.held)+64 {
			f.compact()
		}
	}
}

// compact drops the answered requests from the order.
func (f *pendingFold) compact() {
	kept := f.order[:0]
	for _, m := range f.order {
		if m != nil {
			f.held[*m.Envelope.Correlation] = len(kept)
			kept = append(kept, m)
		}
	}
	clear(f.order[len(kept):])
	f.order = kept
}

// mayAnswer reports whether answer counts for req under v, by the rule an
// asker applies: verified, and from the request's target, else one of its
// approvers, else an operator key.
func mayAnswer(req, answer *runtime.Message, v runtime.Verifier) bool {
	verified, err := answer.Verify(v)
	if err != nil {
		return false
	}
	if target := req.Envelope.Target; target != nil {
		return verified.Principal == string(*target)
	}
	var approvers []string
	if s, ok := req.Envelope.Metadata.Get(MetaApprovers).AsStr(); ok && s != "" {
		approvers = strings.Split(s, ",")
	}
	return approves(approvers)(verified)
}
