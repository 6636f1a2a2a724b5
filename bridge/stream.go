package bridge

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// StreamSpec says where a chunk stream goes and what it answers.
type StreamSpec struct {
	// Topic the chunks are appended to (e.g. agent.llm-io or the caller's
	// reply topic).
	Topic string
	// From is the writing agent's id.
	From string
	// Conversation the stream belongs to.
	Conversation wire.ConversationID
	// Correlation is the request the stream answers; required by AGDX.
	Correlation wire.CorrelationID
	// Purpose is the chunk purpose: wire.OperationChat (default),
	// OperationReasoning or OperationToolArgs.
	Purpose string
	// Tool names the tool a tool_args stream calls.
	Tool string
	// ContentType of every piece; default raw.
	ContentType wire.ContentType
	// Deadline, when set, rides the opening chunk.
	Deadline time.Time
	// Hops is the bridge path the stream carries as bridge_hops.
	Hops []string
}

// StreamWriter writes one AGDX chunk stream from outside a handler (the
// runtime's Ctx.Stream answers the request a handler is handling; a bridge
// or a model adapter streams on its own): one channel, sequence numbers
// from 0, the purpose and deadline on the opening chunk, a terminal chunk
// or an error at the end. Safe for concurrent use; chunks keep call order.
type StreamWriter struct {
	client *runtime.Client
	spec   StreamSpec
	base   wire.Envelope

	mu   sync.Mutex
	seq  uint64
	done bool
}

// OpenStream returns a writer for a new stream under spec; nothing is
// published until the first Send or Close.
func OpenStream(client *runtime.Client, spec StreamSpec) (*StreamWriter, error) {
	if spec.Purpose == "" {
		spec.Purpose = wire.OperationChat
	}
	if !wire.IsChunkPurpose(spec.Purpose) {
		return nil, fmt.Errorf("bridge: %q is not a chunk purpose (chat|reasoning|tool_args)", spec.Purpose)
	}
	source, err := wire.ParseAgentID(spec.From)
	if err != nil {
		return nil, fmt.Errorf("bridge: stream source: %w", err)
	}
	if spec.Topic == "" {
		return nil, fmt.Errorf("bridge: a stream needs a topic")
	}
	corr, ch := spec.Correlation, client.IDs().NewID()
	base := wire.Envelope{Kind: wire.KindChunk, Conversation: spec.Conversation, Source: source, Correlation: &corr, Channel: &ch}
	if spec.Tool != "" {
		tool := spec.Tool
		base.Tool = &tool
	}
	if spec.Hops != nil {
		base.Metadata.Set(wire.MetaBridgeHops, HopsValue(spec.Hops))
	}
	return &StreamWriter{client: client, spec: spec, base: base}, nil
}

// Channel returns the stream's channel id.
func (w *StreamWriter) Channel() wire.ChannelID { return *w.base.Channel }

// Send publishes body as the next chunk; an empty body or one above
// wire.MaxChunkBodyBytes is refused.
func (w *StreamWriter) Send(ctx context.Context, body []byte) error {
	if len(body) == 0 {
		return fmt.Errorf("bridge: empty chunk body")
	}
	if len(body) > wire.MaxChunkBodyBytes {
		return fmt.Errorf("bridge: chunk body of %d bytes exceeds %d", len(body), wire.MaxChunkBodyBytes)
	}
	return w.publish(ctx, wire.KindChunk, body, FinishNone)
}

// FinishNone marks a chunk that does not end the stream.
const FinishNone = ""

// Close ends the stream with a terminal chunk whose finish reason is
// reason (runtime.FinishStop when empty); after Close or Fail it is a no-op.
func (w *StreamWriter) Close(ctx context.Context, reason string) error {
	if reason == "" {
		reason = runtime.FinishStop
	}
	return w.publish(ctx, wire.KindChunk, nil, reason)
}

// Fail ends the stream with an AGDX error on its channel.
func (w *StreamWriter) Fail(ctx context.Context, code wire.ErrorCode, message string) error {
	eb := &wire.ErrorBody{Code: code}
	if message != "" {
		eb.Message = &message
	}
	body, err := eb.Marshal()
	if err != nil {
		return fmt.Errorf("bridge: encode stream error: %w", err)
	}
	return w.publish(ctx, wire.KindError, body, runtime.FinishStop)
}

func (w *StreamWriter) publish(ctx context.Context, kind wire.Kind, body []byte, finish string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	last := finish != FinishNone
	if w.done {
		if last {
			return nil
		}
		return fmt.Errorf("bridge: send on a finished stream")
	}
	env := w.base
	env.Metadata = w.base.Metadata.Clone()
	seq := w.seq
	env.Kind, env.Body, env.Sequence = kind, body, &seq
	ct := w.spec.ContentType
	switch kind {
	case wire.KindChunk:
		if seq == 0 {
			purpose := w.spec.Purpose
			env.Operation = &purpose
			if !w.spec.Deadline.IsZero() {
				micros := uint64(w.spec.Deadline.UnixMicro())
				env.DeadlineMicros = &micros
			}
		}
		if last {
			env.Last = true
			env.FinishReason = &finish
		}
	case wire.KindError:
		ct = wire.ContentCBOR
		env.Tool = nil
	}
	if _, err := Publish(ctx, w.client, w.spec.Topic, &env, ct); err != nil {
		return err
	}
	w.seq++
	w.done = last
	return nil
}
