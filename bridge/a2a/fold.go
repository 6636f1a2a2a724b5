package a2a

import (
	"encoding/json"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// fold replays a task's records, in log order, into its A2A state: task
// statuses set the state, the agent's answer completes it (its body the
// artifact), an AGDX error fails it (or carries its own state, as a cancel
// does), and chunk streams build artifacts. Nothing moves a task on once it
// is terminal.
type fold struct {
	seen    bool
	topic   string
	owner   string
	state   a2a.TaskState
	message *a2a.Message
	answer  *a2a.Artifact
	streams []*stream
	updates []a2a.Event
}

// stream is one chunk channel of the task, as an artifact.
type stream struct {
	channel wire.ID
	parts   a2a.ContentParts
}

func (f *fold) next(m *runtime.Message) {
	if f.state.Terminal() {
		return
	}
	e := m.Envelope
	if e == nil {
		// An agent answers a request with a plain message echoing the
		// correlation, unless it signs (then an AGDX response).
		if f.seen && m.Provenance.Correlation == m.Provenance.Conversation.String() {
			f.state = a2a.TaskStateCompleted
			f.answer = &a2a.Artifact{ID: a2a.ArtifactID(m.Position.String()), Name: "answer", Parts: parts(m)}
			f.updates = append(f.updates, f.answerUpdate(), f.update(m))
		}
		return
	}
	if e.Correlation == nil || *e.Correlation != e.Conversation {
		return
	}
	switch {
	case e.Kind == wire.KindStatus && e.Operation != nil && *e.Operation == wire.OperationTask && e.TaskState != nil:
		if !f.seen {
			f.topic = m.Topic
			f.owner, _ = e.Metadata.Get(metaOwner).AsStr()
		}
		f.seen = true
		f.state = state(*e.TaskState)
	case !f.seen:
		return // records of a conversation that is no task of this bridge
	case e.Kind == wire.KindChunk:
		f.chunk(m)
	case e.Kind == wire.KindResponse:
		f.state = a2a.TaskStateCompleted
		if e.TaskState != nil {
			f.state = state(*e.TaskState)
		}
		f.answer = &a2a.Artifact{ID: a2a.ArtifactID(idText(e.Record)), Name: "answer", Parts: parts(m)}
		// A streaming client reads the answer only from an artifact update.
		f.updates = append(f.updates, f.answerUpdate())
	case e.Kind == wire.KindError:
		f.state = a2a.TaskStateFailed
		if e.TaskState != nil {
			f.state = state(*e.TaskState)
		}
		text := "failed"
		if eb, err := wire.DecodeErrorBody(e.Body); err == nil && eb.Message != nil {
			text = *eb.Message
		}
		f.message = a2a.NewMessage(a2a.MessageRoleAgent, a2a.TextPart{Text: text})
	default:
		return
	}
	f.updates = append(f.updates, f.update(m))
}

// chunk adds one piece of a stream; its terminal chunk completes the task.
func (f *fold) chunk(m *runtime.Message) {
	e := m.Envelope
	var s *stream
	for _, x := range f.streams {
		if x.channel == *e.Channel {
			s = x
		}
	}
	if s == nil {
		// Never nil parts: a stream of only its empty last chunk is an
		// artifact with none, and A2A 0.3 clients refuse "parts": null.
		s = &stream{channel: *e.Channel, parts: a2a.ContentParts{}}
		f.streams = append(f.streams, s)
	}
	if len(e.Body) > 0 {
		s.parts = append(s.parts, parts(m)...)
	}
	if e.Last {
		f.state = a2a.TaskStateCompleted
	}
}

// answerUpdate is the artifact update carrying the answer whole; the status
// update after it ends the stream.
func (f *fold) answerUpdate() a2a.Event {
	return &a2a.TaskArtifactUpdateEvent{Artifact: f.answer, LastChunk: true}
}

// update is the stream event m makes: an artifact piece for a chunk, a
// status update otherwise.
func (f *fold) update(m *runtime.Message) a2a.Event {
	if e := m.Envelope; e != nil && e.Kind == wire.KindChunk {
		// Never nil: A2A 0.3 clients refuse "parts": null on the empty
		// chunk that ends a stream.
		p := a2a.ContentParts{}
		if len(e.Body) > 0 {
			p = parts(m)
		}
		return &a2a.TaskArtifactUpdateEvent{
			Artifact: &a2a.Artifact{ID: a2a.ArtifactID(e.Channel.String()), Parts: p},
			Append:   *e.Sequence > 0, LastChunk: e.Last,
		}
	}
	return &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: f.state, Message: f.message}, Final: f.state.Terminal()}
}

// artifacts are the task's outputs: each stream, then the answer.
func (f *fold) artifacts() []*a2a.Artifact {
	var out []*a2a.Artifact
	for _, s := range f.streams {
		out = append(out, &a2a.Artifact{ID: a2a.ArtifactID(s.channel.String()), Name: "stream", Parts: s.parts})
	}
	if f.answer != nil {
		out = append(out, f.answer)
	}
	return out
}

// events are the updates with the task's ids filled in; a stream's
// terminal chunk is followed by the final status it implies.
func (f *fold) events(t *a2a.Task) []a2a.Event {
	out := make([]a2a.Event, 0, len(f.updates)+1)
	for i, u := range f.updates {
		switch u := u.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			u.TaskID, u.ContextID = t.ID, t.ContextID
			out = append(out, u)
			_, statusNext := nextEvent(f.updates, i).(*a2a.TaskStatusUpdateEvent)
			if u.LastChunk && !statusNext {
				out = append(out, &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}, Final: true})
			}
		case *a2a.TaskStatusUpdateEvent:
			u.TaskID, u.ContextID = t.ID, t.ContextID
			out = append(out, u)
		}
	}
	return out
}

// nextEvent is the update after the i-th, or nil.
func nextEvent(updates []a2a.Event, i int) a2a.Event {
	if i+1 < len(updates) {
		return updates[i+1]
	}
	return nil
}

// parts is a body as A2A parts: a JSON object as a data part, any other
// value as text.
func parts(m *runtime.Message) a2a.ContentParts {
	raw, err := bridge.BodyJSON(m)
	if err != nil {
		return a2a.ContentParts{a2a.TextPart{Text: string(m.Body())}}
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil && obj != nil {
		return a2a.ContentParts{a2a.DataPart{Data: obj}}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return a2a.ContentParts{a2a.TextPart{Text: s}}
	}
	return a2a.ContentParts{a2a.TextPart{Text: string(raw)}}
}

// state is the A2A name of a wire task state.
func state(s wire.TaskState) a2a.TaskState {
	switch s {
	case wire.TaskSubmitted:
		return a2a.TaskStateSubmitted
	case wire.TaskWorking:
		return a2a.TaskStateWorking
	case wire.TaskInputRequired:
		return a2a.TaskStateInputRequired
	case wire.TaskCompleted:
		return a2a.TaskStateCompleted
	case wire.TaskCanceled:
		return a2a.TaskStateCanceled
	case wire.TaskFailed:
		return a2a.TaskStateFailed
	case wire.TaskRejected:
		return a2a.TaskStateRejected
	case wire.TaskAuthRequired:
		return a2a.TaskStateAuthRequired
	}
	return a2a.TaskStateUnknown
}

func idText(id *wire.ID) string {
	if id == nil {
		return ""
	}
	return id.String()
}
