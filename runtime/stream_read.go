package runtime

import (
	"context"
	"iter"
	"sync/atomic"
	"time"
)

// WithStreamBuffer bounds how many chunks a stream holds ahead of its reader
// (default DefaultStreamBuffer). A burst larger than the buffer reaches a
// reader that keeps up whole; a reader that falls behind ends the stream
// ("stream reorder buffer full") instead of making the client's reply reader buffer.
func WithStreamBuffer(n int) Option {
	return option{optStreamBuffer, func(s *sendSpec) { s.streamBuffer = &n }}
}

// buffered is the stream buffer the options ask for: DefaultStreamBuffer
// unless WithStreamBuffer says otherwise, at least 1.
func (s *sendSpec) buffered() int {
	switch {
	case s.streamBuffer == nil:
		return DefaultStreamBuffer
	case *s.streamBuffer < 1:
		return 1
	}
	return *s.streamBuffer
}

// streamGrace is how long, in all, the reply reader waits for the reader of
// one stream to make room in its full inbox before it marks the stream
// overflowed. A reader that keeps up takes a chunk within microseconds, so a
// burst larger than the buffer (one reply-reader pass offers up to 200
// records without yielding) reaches it whole; a reader that stopped costs
// the other callers of the client at most this once. Wall time, like the
// reply reader's poll interval: it measures scheduling, not the stream.
const streamGrace = 100 * time.Millisecond

// streamInbox is where the reply reader drops the chunks of one stream. A
// full inbox holds the reply reader up for at most streamGrace over the
// stream's life; past that the stream is overflowed, so a slow consumer of
// one stream costs the other callers of the client little.
type streamInbox struct {
	ch       chan *Message
	overflow atomic.Bool
	gone     chan struct{} // closed when the stream's reader stops
	waited   time.Duration // reply reader only
}

func newStreamInbox(n int) *streamInbox {
	return &streamInbox{ch: make(chan *Message, n), gone: make(chan struct{})}
}

// offer hands m to the stream, waiting for room while the stream's grace
// lasts.
func (in *streamInbox) offer(m *Message) {
	if in.overflow.Load() {
		return
	}
	select {
	case in.ch <- m:
		return
	default:
	}
	left := streamGrace - in.waited
	if left <= 0 {
		in.overflow.Store(true)
		return
	}
	start := time.Now()
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case in.ch <- m:
	case <-t.C:
		in.overflow.Store(true)
	case <-in.gone:
	}
	in.waited += time.Since(start)
}

// isStreamRecord reports whether m belongs to a chunk stream: a chunk, or
// an error on a channel.
func isStreamRecord(m *Message) bool {
	return m.Envelope != nil && m.Envelope.Channel != nil
}

// registerStream registers a waiter whose stream records go to in.
func (h *replyHub) registerStream(ctx context.Context, corr, expect string, in *streamInbox) (*replyWaiter, error) {
	w, err := h.register(ctx, corr, expect)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	w.stream = in
	h.mu.Unlock()
	return w, nil
}

// Stream publishes msg, an AGDX command, and reads its answer as a chunk
// stream, yielding the bodies in sequence order whatever order they arrive
// in. The stream's timeout (WithTimeout, default DefaultRequestTimeout) is
// how long it may go without a new chunk. Iteration ends after the terminal
// chunk, or with one error, decided by the order of the records on the log
// (what follows the record that completed the stream is not read): a
// broken stream's *Error (its Channel and Sequence say where; CodeTimeout
// when no terminal came in time, CodeHandler for a gap, a duplicate, a
// second terminal, a chunk after the terminal or an overflow; an identical
// copy of a chunk is dropped), the responder's remote *Error, or the
// context's error. Breaking out of the loop unregisters the stream; it
// starts no goroutine of its own. The command is published when iteration
// starts, once per iteration. It takes the options of Request and
// WithStreamBuffer.
func (c *Client) Stream(ctx context.Context, msg Out, opts ...Option) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		spec := specOf(opts)
		// A stream's chunks are not judged by signer: WithAnswerFrom is
		// refused rather than ignored.
		if err := spec.uses("Client.Stream", optsMessage|optTimeout|optReplyTopic|optStreamBuffer); err != nil {
			yield(nil, err)
			return
		}
		out, env, err := c.request(ctx, &msg, spec)
		if err != nil {
			yield(nil, err)
			return
		}
		hub, err := c.hub(spec.reply())
		if err != nil {
			yield(nil, err)
			return
		}
		in := newStreamInbox(spec.buffered())
		defer close(in.gone)
		w, err := hub.registerStream(ctx, env.Correlation.String(), msg.Target, in)
		if err != nil {
			yield(nil, err)
			return
		}
		defer hub.unregister(w)
		if _, err := c.send(ctx, msg.topic(), out, env); err != nil {
			yield(nil, err)
			return
		}
		asm := newChunkAssembler(spec.buffered())
		var deadline <-chan time.Time
		if !spec.deadline.IsZero() {
			deadline = c.opts.Clock.After(spec.deadline.Sub(c.opts.Clock.Now()))
		}
		for {
			idle := c.opts.Clock.After(spec.wait())
			var m *Message
			select {
			case m = <-in.ch:
			case <-w.final:
				// An answer without a channel: the responder failed before
				// streaming, or answered in one piece.
				m = w.answered()
				if err := remoteError(m); err != nil {
					yield(nil, err)
					return
				}
				body := m.Payload
				if m.Envelope != nil {
					body = m.Envelope.Body
				}
				yield(body, nil)
				return
			case <-idle:
				yield(nil, asm.timeout())
				return
			case <-deadline:
				yield(nil, asm.timeout())
				return
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
			if in.overflow.Load() {
				yield(nil, asm.fail(errStreamOverflow, asm.next))
				return
			}
			if !asm.yieldAdded(m, yield) {
				// What lies behind a completing record is not read, however
				// soon it arrived: the outcome follows the log, not timing.
				return
			}
		}
	}
}

// streamOf decodes each body of seq with dec: the typed view of a stream
// that generated clients return. A decode failure ends the iteration.
func streamOf[T any](seq iter.Seq2[[]byte, error], dec func([]byte) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for b, err := range seq {
			var v T
			if err != nil {
				yield(v, err)
				return
			}
			v, err = dec(b)
			if err != nil {
				yield(v, &Error{Code: CodeCodec, Msg: "decode stream item", Err: err})
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}
