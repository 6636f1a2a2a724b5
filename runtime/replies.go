package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// replyHub reads one reply topic for every waiter of a Client. A waiter is
// registered before its request is published and the hub starts reading at
// the topic's tail when it (re)starts, so a reply can never slip past: it
// lands after the registration, and the reader sees everything from there.
type replyHub struct {
	c     *Client
	topic string

	mu      sync.Mutex
	waiters map[string]*replyWaiter // by correlation text
	cursors map[uint32]uint64
	running bool
	stopped bool
	wake    chan struct{}
	done    chan struct{}
}

// replyWaiter receives what carries its correlation: the first answer (a
// response, an error or a plain reply), which is never dropped however much
// else the responder sends and never replaced by a later one, and whether a
// Working task status was seen.
type replyWaiter struct {
	corr     string
	expect   string                   // principal a verified reply must come from, or ""
	accept   func(sign.Verified) bool // when set, also judges a verified reply's signer
	answer   atomic.Pointer[Message]
	final    chan struct{} // closed once answer is set
	progress chan struct{} // capacity 1: signalled when consumed turns true
	consumed atomic.Bool
	stream   *streamInbox // set for a chunk stream (stream_read.go), else nil
}

func newReplyHub(c *Client, topic string) *replyHub {
	return &replyHub{c: c, topic: topic, waiters: make(map[string]*replyWaiter), wake: make(chan struct{}, 1)}
}

// register adds a waiter for corr; call it before publishing the request.
// It seeds the reader at the topic's tail when the reader is idle; a reply
// topic that does not exist yet is seeded empty and read from its start
// once it appears (a fan-out reply topic is created by its first reply).
func (h *replyHub) register(ctx context.Context, corr, expect string) (*replyWaiter, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return nil, &Error{Code: CodeConfig, Msg: "client is closed"}
	}
	if !h.running {
		cursors, err := h.tail(ctx)
		if err != nil {
			return nil, err
		}
		h.cursors = cursors
		h.running = true
		h.done = make(chan struct{})
		go h.loop(h.done)
	}
	w := &replyWaiter{corr: corr, expect: expect, final: make(chan struct{}), progress: make(chan struct{}, 1)}
	h.waiters[corr] = w
	return w, nil
}

// unregister removes a waiter; the reader stops once nobody waits.
func (h *replyHub) unregister(w *replyWaiter) {
	h.mu.Lock()
	if h.waiters[w.corr] == w {
		delete(h.waiters, w.corr)
	}
	h.mu.Unlock()
}

func (h *replyHub) close() {
	h.mu.Lock()
	h.stopped = true
	done := h.done
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
	if done != nil {
		<-done
	}
}

// tail returns the next offset of every partition; none when the topic's
// partitions cannot be listed for good (it does not exist yet), so that
// everything on it counts as new once it appears. A transient failure or a
// cancelled ctx is returned instead: reading a busy reply topic from its
// start would hold every request up behind its whole history.
func (h *replyHub) tail(ctx context.Context) (map[uint32]uint64, error) {
	n, err := h.c.t.Partitions(ctx, h.topic)
	if err != nil && (errors.Is(err, ErrTransient) || ctx.Err() != nil) {
		return nil, err
	}
	if err != nil {
		h.c.log.Debug("reply topic not readable yet; reading it from its start once it is", "topic", h.topic, "error", err)
		return map[uint32]uint64{}, nil
	}
	cursors := make(map[uint32]uint64, n)
	for p := uint32(0); p < n; p++ {
		next, err := h.c.t.NextOffset(ctx, h.topic, p)
		if err != nil {
			return nil, err
		}
		cursors[p] = next
	}
	return cursors, nil
}

// loop reads every partition from its cursor and hands matching records to
// their waiters, until no waiter is left or the client closes.
func (h *replyHub) loop(done chan struct{}) {
	defer close(done)
	ctx := context.Background()
	for {
		h.mu.Lock()
		if h.stopped || len(h.waiters) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		if !h.pass(ctx) {
			t := time.NewTimer(h.c.opts.ReplyPollInterval)
			select {
			case <-t.C:
			case <-h.wake:
			}
			t.Stop()
		}
	}
}

// pass reads each partition once and reports whether it found records.
func (h *replyHub) pass(ctx context.Context) bool {
	n, err := h.c.t.Partitions(ctx, h.topic)
	if err != nil {
		// Most often a reply topic its first reply has yet to create.
		h.c.log.Debug("reply reader cannot list partitions", "topic", h.topic, "error", err)
		return false
	}
	found := false
	for p := uint32(0); p < n; p++ {
		h.mu.Lock()
		from, ok := h.cursors[p]
		h.mu.Unlock()
		if !ok {
			// A partition added after the reader started: everything on it is new.
			from = 0
		}
		recs, err := h.c.t.ReadRange(ctx, h.topic, p, from, 200)
		if err != nil {
			h.c.log.Warn("reply reader cannot read", "topic", h.topic, "partition", p, "error", err)
			continue
		}
		if len(recs) == 0 {
			continue
		}
		found = true
		for i := range recs {
			h.deliver(&recs[i])
		}
		h.mu.Lock()
		h.cursors[p] = recs[len(recs)-1].Offset + 1
		h.mu.Unlock()
	}
	return found
}

// deliver decodes a record and passes it to the waiter of its correlation.
// Under a verifier only AGDX envelopes signed over their observed headers
// count, and a reply to a targeted request must come from the target.
func (h *replyHub) deliver(rec *Incoming) {
	m, err := DecodeRecord(h.topic, rec, wire.FeaturesNone)
	if err != nil || m.Provenance.Correlation == "" {
		return
	}
	h.mu.Lock()
	w := h.waiters[m.Provenance.Correlation]
	h.mu.Unlock()
	if w == nil {
		return
	}
	if v := h.c.verifier(); v != nil {
		if m.Envelope == nil {
			return
		}
		verified, err := v.VerifyObserved(m.Envelope, m.observed, m.Timestamp)
		if err != nil {
			h.c.log.Warn("ignoring unverified reply", "topic", h.topic, "position", m.Position.String(), "error", err)
			return
		}
		if w.expect != "" && verified.Principal != w.expect {
			h.c.log.Warn("ignoring reply signed by another principal", "want", w.expect, "got", verified.Principal)
			return
		}
		if w.accept != nil && !w.accept(verified) {
			h.c.log.Warn("ignoring reply from a signer the request does not accept", "principal", verified.Principal, "kind", string(verified.Kind))
			return
		}
		m.VerifiedPrincipal = verified.Principal
	}
	switch {
	case w.stream != nil && isStreamRecord(m):
		w.stream.offer(m)
	case isTerminalReply(m):
		w.offer(m)
	case isWorkingAck(m):
		w.consumed.Store(true)
		select {
		case w.progress <- struct{}{}:
		default:
		}
	}
}

// isWorkingAck reports whether m is an ack-on-pickup: a task status Working.
func isWorkingAck(m *Message) bool {
	env := m.Envelope
	return env != nil && env.Kind == wire.KindStatus && env.Operation != nil && *env.Operation == wire.OperationTask &&
		env.TaskState != nil && *env.TaskState == wire.TaskWorking
}

// offer records m as the answer unless one arrived before it: the first
// answer wins, and offering never blocks, however many answers arrive (an
// agent answering twice, a redelivered duplicate, several answerers).
func (w *replyWaiter) offer(m *Message) {
	if w.answer.CompareAndSwap(nil, m) {
		close(w.final)
	}
}

// answered returns the waiter's answer if it has one, without waiting; it
// lets an answer that raced a timer win.
func (w *replyWaiter) answered() *Message { return w.answer.Load() }

// isTerminalReply reports whether m answers a request: a response, an
// error, or a plain reply. Events, chunks and statuses carrying the
// correlation are progress, not answers (the reference takes any correlated
// record; see the README's decisions).
func isTerminalReply(m *Message) bool {
	if m.Envelope == nil {
		return true
	}
	return m.Envelope.Kind == wire.KindResponse || m.Envelope.Kind == wire.KindError
}
