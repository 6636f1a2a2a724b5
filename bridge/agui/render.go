package agui

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Renderer turns a conversation's records, fed in log order, into AG-UI
// events. It remembers what the events depend on across records: each
// chunk channel's purpose (only the opening chunk carries it) and which runs
// have started. The zero value is ready; not safe for concurrent use.
type Renderer struct {
	channels map[wire.ID]channel
	runs     map[string]bool
}

type channel struct {
	purpose string
	corr    string
	tool    string
}

// Render renders every message of msgs in order.
func Render(msgs []*runtime.Message) []Event {
	var r Renderer
	var out []Event
	for _, m := range msgs {
		out = r.Next(out, m)
	}
	return out
}

// Next appends the events m renders as to dst; plain messages render as
// nothing.
func (r *Renderer) Next(dst []Event, m *runtime.Message) []Event {
	e := m.Envelope
	if e == nil {
		return dst
	}
	if e.Channel != nil && (e.Kind == wire.KindChunk || e.Kind == wire.KindError) {
		return r.chunk(dst, e, m.HasContentType && m.ContentType == wire.ContentJSON)
	}
	switch e.Kind {
	case wire.KindStatus:
		return r.status(dst, e)
	case wire.KindResponse, wire.KindError:
		if e.Tool != nil {
			return append(dst, Event{Type: ToolCallResult, ToolCallID: idText(e.Correlation), Content: resultText(e)})
		}
		if e.Kind == wire.KindError {
			return append(dst, Event{Type: RunError, Message: errorText(e.Body)})
		}
	case wire.KindEvent:
		return stateEvent(dst, e)
	}
	return dst
}

// chunk renders one record of a chunk stream, or the error ending it.
// A JSON chunk that is one string (a typed stream of strings) renders as
// that string, not its quoted form.
func (r *Renderer) chunk(dst []Event, e *wire.Envelope, isJSON bool) []Event {
	piece := text(e.Body)
	if isJSON {
		var s string
		if json.Unmarshal(e.Body, &s) == nil {
			piece = s
		}
	}
	if r.channels == nil {
		r.channels = make(map[wire.ID]channel)
	}
	ch, known := r.channels[*e.Channel]
	opening := e.Sequence != nil && *e.Sequence == 0 && e.Kind == wire.KindChunk
	// An error on a channel never opened (a stream handler refusing its
	// input) has no message to end: AG-UI clients refuse an end without
	// its start, so it renders as the run error alone.
	if e.Kind == wire.KindError && !known {
		return append(dst, Event{Type: RunError, Message: errorText(e.Body)})
	}
	if opening || !known {
		ch = channel{purpose: wire.OperationChat, corr: idText(e.Correlation)}
		if e.Operation != nil {
			ch.purpose = *e.Operation
		}
		if e.Tool != nil {
			ch.tool = *e.Tool
		}
		r.channels[*e.Channel] = ch
	}
	id := e.Channel.String()
	start, content, end, role := TextMessageStart, TextMessageContent, TextMessageEnd, "assistant"
	switch ch.purpose {
	case wire.OperationReasoning:
		start, content, end, role = ReasoningMessageStart, ReasoningMessageContent, ReasoningMessageEnd, "reasoning"
	case wire.OperationToolArgs:
		if opening {
			dst = append(dst, Event{Type: ToolCallStart, ToolCallID: ch.corr, ToolCallName: ch.tool})
		}
		if e.Kind == wire.KindChunk && len(e.Body) > 0 {
			dst = append(dst, Event{Type: ToolCallArgs, ToolCallID: ch.corr, Delta: text(e.Body)})
		}
		if e.Last || e.Kind == wire.KindError {
			dst = append(dst, Event{Type: ToolCallEnd, ToolCallID: ch.corr})
			delete(r.channels, *e.Channel)
		}
		if e.Kind == wire.KindError {
			dst = append(dst, Event{Type: RunError, Message: errorText(e.Body)})
		}
		return dst
	}
	if opening {
		dst = append(dst, Event{Type: start, MessageID: id, Role: role})
	}
	if e.Kind == wire.KindChunk && len(e.Body) > 0 {
		dst = append(dst, Event{Type: content, MessageID: id, Delta: piece})
	}
	if e.Last || e.Kind == wire.KindError {
		dst = append(dst, Event{Type: end, MessageID: id})
		delete(r.channels, *e.Channel)
	}
	if e.Kind == wire.KindError {
		dst = append(dst, Event{Type: RunError, Message: errorText(e.Body)})
	}
	return dst
}

// status renders a task status as the run's lifecycle: the first status of
// a run starts it, a terminal one finishes it (failed and rejected as a run
// error).
func (r *Renderer) status(dst []Event, e *wire.Envelope) []Event {
	if e.Operation == nil || *e.Operation != wire.OperationTask || e.TaskState == nil {
		return dst
	}
	if r.runs == nil {
		r.runs = make(map[string]bool)
	}
	thread, run := e.Conversation.String(), idText(e.Correlation)
	if !r.runs[run] {
		r.runs[run] = true
		dst = append(dst, Event{Type: RunStarted, ThreadID: thread, RunID: run})
	}
	switch *e.TaskState {
	case wire.TaskFailed, wire.TaskRejected:
		msg := string(e.Body)
		if msg == "" {
			msg = e.TaskState.String()
		}
		dst = append(dst, Event{Type: RunError, ThreadID: thread, RunID: run, Message: msg})
	default:
		if e.TaskState.Terminal() {
			dst = append(dst, Event{Type: RunFinished, ThreadID: thread, RunID: run})
		}
	}
	return dst
}

// stateEvent renders a state snapshot or delta; a body that is not JSON is
// skipped (it could not be applied either).
func stateEvent(dst []Event, e *wire.Envelope) []Event {
	if e.Operation == nil || !json.Valid(e.Body) {
		return dst
	}
	switch *e.Operation {
	case wire.OperationStateSnapshot:
		return append(dst, Event{Type: StateSnapshot, Snapshot: json.RawMessage(e.Body)})
	case wire.OperationStateDelta:
		return append(dst, Event{Type: StateDelta, Patch: json.RawMessage(e.Body)})
	}
	return dst
}

// resultText is a tool answer as text: an error's message, or the body.
func resultText(e *wire.Envelope) string {
	if e.Kind == wire.KindError {
		return errorText(e.Body)
	}
	return text(e.Body)
}

// errorText is the message of an AGDX error body, or the body as text when
// it is no error body.
func errorText(body []byte) string {
	if eb, err := wire.DecodeErrorBody(body); err == nil {
		if eb.Message != nil {
			return *eb.Message
		}
		return eb.Code.String()
	}
	return text(body)
}

func text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func idText(id *wire.ID) string {
	if id == nil {
		return ""
	}
	return id.String()
}
