package agui

import (
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// runFrame makes the events of a run the handler started what an AG-UI
// client wants of one run: started once (the handler sends RUN_STARTED
// under the client's own thread and run ids before anything), and
// finished once. The agent's records decide when it is over: a terminal
// task status or an AGDX error; for an agent that reports no task status
// (a generated request or stream handler), its response or the end of its
// chunk stream.
type runFrame struct {
	thread, id string
	// statuses is whether the agent reported a task status in this run:
	// then only a terminal one ends it.
	statuses bool
	// correlation is the run's command's: the records answering it are the
	// run's, and other runs on the thread are not. Nil: every record is.
	correlation *wire.ID
}

// owns reports whether m belongs to the run.
func (f *runFrame) owns(m *runtime.Message) bool {
	if f.correlation == nil {
		return true
	}
	if m.Envelope == nil || m.Envelope.Correlation == nil {
		return false
	}
	return *m.Envelope.Correlation == *f.correlation
}

// frame rewrites the events one record rendered as: the agent's own run
// start is dropped, its run end carries the client's ids, and an answer
// that ends a status-less run adds the RUN_FINISHED.
func (f *runFrame) frame(events []Event, m *runtime.Message) []Event {
	out := events[:0]
	for _, e := range events {
		switch e.Type {
		case RunStarted:
			continue
		case RunFinished, RunError:
			e.ThreadID, e.RunID = f.thread, f.id
		}
		out = append(out, e)
	}
	env := m.Envelope
	if env == nil {
		return out
	}
	if env.Kind == wire.KindStatus {
		f.statuses = true
	}
	answered := env.Kind == wire.KindResponse && env.Channel == nil ||
		env.Kind == wire.KindChunk && env.Last
	if answered && !f.statuses && !ends(out) {
		out = append(out, Event{Type: RunFinished, ThreadID: f.thread, RunID: f.id})
	}
	return out
}

// ends reports whether events end a run.
func ends(events []Event) bool {
	for _, e := range events {
		if e.Type == RunFinished || e.Type == RunError {
			return true
		}
	}
	return false
}
