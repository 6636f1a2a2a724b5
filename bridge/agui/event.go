// Package agui renders a conversation's records on the log as AG-UI events
// (the Agent-User Interaction protocol chat front ends speak): chat chunk
// streams as text messages, reasoning streams as reasoning messages,
// tool-argument streams as tool calls with the answer as their result, task
// statuses as the run lifecycle, and state snapshots with JSON Patch deltas,
// which it also publishes and folds back into the state. Handler serves the
// events over server-sent events and, with Run, starts the run an AG-UI
// client posts and streams it.
package agui

import (
	"encoding/json"
)

// EventType is an AG-UI event's type, as it travels in the "type" field.
type EventType string

// The AG-UI event types the renderer produces.
const (
	RunStarted              EventType = "RUN_STARTED"
	RunFinished             EventType = "RUN_FINISHED"
	RunError                EventType = "RUN_ERROR"
	TextMessageStart        EventType = "TEXT_MESSAGE_START"
	TextMessageContent      EventType = "TEXT_MESSAGE_CONTENT"
	TextMessageEnd          EventType = "TEXT_MESSAGE_END"
	ReasoningMessageStart   EventType = "REASONING_MESSAGE_START"
	ReasoningMessageContent EventType = "REASONING_MESSAGE_CONTENT"
	ReasoningMessageEnd     EventType = "REASONING_MESSAGE_END"
	ToolCallStart           EventType = "TOOL_CALL_START"
	ToolCallArgs            EventType = "TOOL_CALL_ARGS"
	ToolCallEnd             EventType = "TOOL_CALL_END"
	ToolCallResult          EventType = "TOOL_CALL_RESULT"
	StateSnapshot           EventType = "STATE_SNAPSHOT"
	StateDelta              EventType = "STATE_DELTA"
)

// Event is one AG-UI event; which fields are set depends on Type, and the
// JSON form carries only those, under AG-UI's camelCase names.
type Event struct {
	Type EventType
	// ThreadID and RunID name the run of a RUN_* event: the conversation
	// and the task's correlation.
	ThreadID, RunID string
	// MessageID names a text or reasoning message: the chunk channel.
	MessageID string
	// Role of a message start: "assistant" or "reasoning".
	Role string
	// Delta is a content or tool-argument piece.
	Delta string
	// ToolCallID names a tool call: the correlation of its arguments stream.
	ToolCallID   string
	ToolCallName string
	// Content is a tool result.
	Content string
	// Message is a run error's text.
	Message string
	// Snapshot is a STATE_SNAPSHOT's state, Patch a STATE_DELTA's RFC 6902
	// document (JSON).
	Snapshot json.RawMessage
	Patch    json.RawMessage
}

// MarshalJSON writes the event as AG-UI does: {"type": ..., fields}.
func (e Event) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": e.Type}
	put := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	put("threadId", e.ThreadID)
	put("runId", e.RunID)
	put("messageId", e.MessageID)
	put("role", e.Role)
	put("toolCallId", e.ToolCallID)
	put("toolCallName", e.ToolCallName)
	put("content", e.Content)
	put("message", e.Message)
	switch e.Type {
	case StateSnapshot:
		m["snapshot"] = e.Snapshot
	case StateDelta:
		m["delta"] = e.Patch
	default:
		put("delta", e.Delta)
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads an event MarshalJSON wrote.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w struct {
		Type         EventType       `json:"type"`
		ThreadID     string          `json:"threadId"`
		RunID        string          `json:"runId"`
		MessageID    string          `json:"messageId"`
		Role         string          `json:"role"`
		ToolCallID   string          `json:"toolCallId"`
		ToolCallName string          `json:"toolCallName"`
		Content      string          `json:"content"`
		Message      string          `json:"message"`
		Snapshot     json.RawMessage `json:"snapshot"`
		Delta        json.RawMessage `json:"delta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Event{Type: w.Type, ThreadID: w.ThreadID, RunID: w.RunID, MessageID: w.MessageID, Role: w.Role,
		ToolCallID: w.ToolCallID, ToolCallName: w.ToolCallName, Content: w.Content, Message: w.Message, Snapshot: w.Snapshot}
	switch {
	case w.Type == StateDelta:
		e.Patch = w.Delta
	case len(w.Delta) > 0:
		if err := json.Unmarshal(w.Delta, &e.Delta); err != nil {
			return err
		}
	}
	return nil
}
