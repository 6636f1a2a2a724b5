package runtime

import (
	"strings"
	"sync"

	"github.com/lasergo/laser/wire"
)

// chunkWriter streams the answer to the handled request as AGDX chunks on
// the agent's respond topic: one channel per stream, the request's
// correlation echoed, sequence numbers from 0. The opening chunk (sequence
// 0) carries the purpose and the request's deadline and is sent with the
// first piece, so a stream is never an empty open followed by data. It ends
// with Close (a terminal chunk) or Fail (an AGDX error on the channel). A
// signing agent signs every chunk. Safe for one goroutine at a time.
type chunkWriter struct {
	ctx     *Ctx
	topic   string
	purpose string
	channel wire.ID
	base    wire.Envelope
	ct      wire.ContentType

	mu   sync.Mutex
	seq  uint64
	done bool
}

// Stream starts a chunk stream answering the handled request; purpose
// is the AGDX chunk purpose (wire.OperationChat, Reasoning or ToolArgs) and
// ct the content type of every piece: the stream's Send publishes each piece
// as it is. It fails with CodeNoRespondTopic when the agent has no respond
// topic and with CodeHandlerConfig when the handled message carries no
// correlation.
func (c *Ctx) Stream(purpose string, ct wire.ContentType) (*Stream[[]byte], error) {
	w, err := c.openStream(purpose, ct)
	if err != nil {
		return nil, err
	}
	return newStream(w, func(b []byte) ([]byte, error) { return b, nil }), nil
}

// openStream opens the chunk writer under a Stream.
func (c *Ctx) openStream(purpose string, ct wire.ContentType) (*chunkWriter, error) {
	topic := c.c.cfg.RespondTopic
	if topic == "" {
		return nil, &Error{Code: CodeNoRespondTopic, Msg: "agent has no respond topic"}
	}
	if !wire.IsChunkPurpose(purpose) {
		return nil, errorf(CodeInvalid, "%q is not a chunk purpose (chat|reasoning|tool_args)", purpose)
	}
	o, err := c.answer(wire.KindChunk, nil, sendSpec{}, ct)
	if err != nil {
		return nil, err
	}
	base, err := c.Client().envelope(o)
	if err != nil {
		return nil, err
	}
	return &chunkWriter{ctx: c, topic: topic, purpose: purpose, channel: c.c.ids.NewID(), base: *base, ct: ct}, nil
}

// send publishes one piece as the next data chunk. Bodies above
// wire.MaxChunkBodyBytes and empty bodies are refused.
func (w *chunkWriter) send(body []byte) error {
	if len(body) == 0 {
		return errorf(CodeInvalid, "empty chunk body")
	}
	if len(body) > wire.MaxChunkBodyBytes {
		return errorf(CodeInvalid, "chunk body of %d bytes exceeds %d", len(body), wire.MaxChunkBodyBytes)
	}
	return w.publish(wire.KindChunk, body, false)
}

// fail ends the stream with an AGDX error on its channel.
func (w *chunkWriter) fail(code wire.ErrorCode, message string, retryable bool) error {
	body, err := errorBody(code, message, retryable)
	if err != nil {
		return err
	}
	return w.publish(wire.KindError, body, true)
}

// errorBody encodes the body of an AGDX error.
func errorBody(code wire.ErrorCode, message string, retryable bool) ([]byte, error) {
	eb := &wire.ErrorBody{Code: code, Retryable: retryable}
	if message != "" {
		// An error text quoting a binary body must still reach the caller.
		message = strings.ToValidUTF8(message, "\uFFFD")
		eb.Message = &message
	}
	body, err := eb.Marshal()
	if err != nil {
		return nil, &Error{Code: CodeCodec, Msg: "encode error body", Err: err}
	}
	return body, nil
}

// publish sends the next record of the stream; last marks it as the end.
func (w *chunkWriter) publish(kind wire.Kind, body []byte, last bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		if last {
			return nil
		}
		return errorf(CodeInvalid, "send on a finished stream")
	}
	env := w.base // a copy; the pointers in it are never written through
	env.Kind, env.Body = kind, body
	ch, seq := w.channel, w.seq
	env.Channel, env.Sequence = &ch, &seq
	ct := w.ct
	switch kind {
	case wire.KindChunk:
		if last {
			env.Last = true
			finish := FinishStop
			env.FinishReason = &finish
		}
		if seq == 0 {
			purpose := w.purpose
			env.Operation = &purpose
			env.DeadlineMicros = w.ctx.msg.Provenance.Deadline
		}
	case wire.KindError:
		ct = wire.ContentCBOR
		env.Record = nil // minted by the producer: an error is a record of its own
	}
	if _, err := w.ctx.c.prod.sendEnvelope(w.ctx, w.topic, &env, ct, w.ctx.c.cfg.SigningKey, ""); err != nil {
		return err
	}
	if m := w.ctx.msg; m != nil {
		m.streamed.Store(true)
	}
	w.seq++
	w.done = last
	return nil
}

// Stream is a chunk stream answering the handled request: each item is
// encoded with the stream's encoder and sent as one AGDX data chunk on the
// agent's respond topic, the request's correlation echoed, sequence numbers
// from 0. The opening chunk carries the purpose and the request's deadline
// and goes out with the first item, so a stream is never an empty open
// followed by data. It ends with Close (a terminal chunk) or Fail (an AGDX
// error on the channel). A signing agent signs every chunk. Ctx.Stream
// opens one of raw pieces; generated handlers receive a typed one. Safe for
// one goroutine at a time.
type Stream[T any] struct {
	w   *chunkWriter
	enc func(T) ([]byte, error)
}

// newStream wraps w so that items of type T are encoded by enc.
func newStream[T any](w *chunkWriter, enc func(T) ([]byte, error)) *Stream[T] {
	return &Stream[T]{w: w, enc: enc}
}

// Send encodes v and publishes it as the next chunk. An empty piece and one
// above wire.MaxChunkBodyBytes are refused.
func (s *Stream[T]) Send(v T) error {
	b, err := s.enc(v)
	if err != nil {
		return &Error{Code: CodeCodec, Msg: "encode stream item", Err: err}
	}
	return s.w.send(b)
}

// Channel returns the stream's channel id.
func (s *Stream[T]) Channel() wire.ID { return s.w.channel }

// Close ends the stream with a terminal chunk; closing twice is a no-op.
func (s *Stream[T]) Close() error { return s.w.publish(wire.KindChunk, nil, true) }

// Fail ends the stream with an AGDX error on its channel, which the caller
// reads as a remote *Error; after Close or Fail it is a no-op.
func (s *Stream[T]) Fail(code wire.ErrorCode, message string, retryable bool) error {
	return s.w.fail(code, message, retryable)
}
