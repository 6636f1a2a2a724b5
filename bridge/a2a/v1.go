package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
)

// A2A 1.0 names the JSON-RPC methods after its gRPC service (SendMessage,
// GetTask, ...) and carries proto JSON (ROLE_USER, TASK_STATE_COMPLETED,
// parts without a kind), where a2a-go 0.3 speaks message/send and friends.
// The bridge serves both on one endpoint: a 1.0 method is translated here
// onto the same Bridge calls; anything else goes to a2a-go.

// v1Methods are the A2A 1.0 methods the bridge serves.
var v1Methods = map[string]bool{
	"SendMessage": true, "SendStreamingMessage": true, "GetTask": true, "CancelTask": true, "SubscribeToTask": true,
}

type v1Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type v1Part struct {
	Text      *string        `json:"text,omitempty"`
	Data      any            `json:"data,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	MediaType string         `json:"mediaType,omitempty"`
}

type v1Message struct {
	MessageID string         `json:"messageId"`
	ContextID string         `json:"contextId,omitempty"`
	TaskID    string         `json:"taskId,omitempty"`
	Role      string         `json:"role"`
	Parts     []v1Part       `json:"parts"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

type v1SendParams struct {
	Message       *v1Message `json:"message"`
	Configuration *struct {
		ReturnImmediately bool `json:"returnImmediately"`
	} `json:"configuration"`
	Metadata map[string]any `json:"metadata"`
}

type v1TaskParams struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata"`
}

// isV1 reports whether a buffered JSON-RPC body calls an A2A 1.0 method.
func isV1(body []byte) bool {
	var head struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &head) == nil && v1Methods[head.Method]
}

// serveV1 answers one A2A 1.0 JSON-RPC request.
func (b *Bridge) serveV1(w http.ResponseWriter, r *http.Request, body []byte) {
	var req v1Request
	if err := json.Unmarshal(body, &req); err != nil {
		writeV1(w, nil, nil, fmt.Errorf("%w: %v", a2a.ErrParseError, err))
		return
	}
	ctx := r.Context()
	switch req.Method {
	case "SendMessage", "SendStreamingMessage":
		var p v1SendParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			writeV1(w, req.ID, nil, fmt.Errorf("%w: %v", a2a.ErrInvalidParams, err))
			return
		}
		params, err := p.toV03()
		if err != nil {
			writeV1(w, req.ID, nil, err)
			return
		}
		if req.Method == "SendStreamingMessage" {
			b.streamV1(w, req.ID, b.Stream(ctx, params))
			return
		}
		task, err := b.Send(ctx, params)
		if err != nil {
			writeV1(w, req.ID, nil, err)
			return
		}
		writeV1(w, req.ID, map[string]any{"task": v1Task(task)}, nil)
	case "GetTask", "CancelTask", "SubscribeToTask":
		var p v1TaskParams
		if err := json.Unmarshal(req.Params, &p); err != nil || p.ID == "" {
			writeV1(w, req.ID, nil, fmt.Errorf("%w: params need the task's id", a2a.ErrInvalidParams))
			return
		}
		switch req.Method {
		case "GetTask":
			task, err := b.Task(ctx, a2a.TaskID(p.ID))
			writeV1(w, req.ID, v1TaskOrNil(task, err), err)
		case "CancelTask":
			token, _ := p.Metadata[MetaCancelToken].(string)
			task, err := b.Cancel(ctx, a2a.TaskID(p.ID), token)
			writeV1(w, req.ID, v1TaskOrNil(task, err), err)
		default:
			b.streamV1(w, req.ID, b.Resubscribe(ctx, a2a.TaskID(p.ID)))
		}
	}
}

func v1TaskOrNil(t *a2a.Task, err error) any {
	if err != nil {
		return nil
	}
	return v1Task(t)
}

// toV03 is the 1.0 send request as a2a-go's params.
func (p *v1SendParams) toV03() (*a2a.MessageSendParams, error) {
	if p.Message == nil {
		return nil, fmt.Errorf("%w: no message", a2a.ErrInvalidParams)
	}
	m := &a2a.Message{ID: p.Message.MessageID, ContextID: p.Message.ContextID, TaskID: a2a.TaskID(p.Message.TaskID),
		Role: a2a.MessageRoleUser, Metadata: p.Message.Metadata}
	if p.Message.Role == "ROLE_AGENT" {
		m.Role = a2a.MessageRoleAgent
	}
	for i, part := range p.Message.Parts {
		switch {
		case part.Text != nil:
			m.Parts = append(m.Parts, a2a.TextPart{Text: *part.Text, Metadata: part.Metadata})
		case part.Data != nil:
			obj, ok := part.Data.(map[string]any)
			if !ok {
				// A 0.3 data part holds an object; any other value travels
				// as its JSON text.
				raw, _ := json.Marshal(part.Data)
				m.Parts = append(m.Parts, a2a.TextPart{Text: string(raw), Metadata: part.Metadata})
				continue
			}
			m.Parts = append(m.Parts, a2a.DataPart{Data: obj, Metadata: part.Metadata})
		default:
			return nil, fmt.Errorf("%w: part %d is neither text nor data (files are not served)", a2a.ErrInvalidParams, i)
		}
	}
	blocking := p.Configuration == nil || !p.Configuration.ReturnImmediately
	return &a2a.MessageSendParams{Message: m, Metadata: p.Metadata, Config: &a2a.MessageSendConfig{Blocking: &blocking}}, nil
}

// streamV1 writes a stream's events as server-sent JSON-RPC responses.
func (b *Bridge) streamV1(w http.ResponseWriter, id any, events func(func(a2a.Event, error) bool)) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for ev, err := range events {
		var out []byte
		if err != nil {
			out = v1Response(id, nil, err)
		} else {
			out = v1Response(id, v1Event(ev), nil)
		}
		if _, werr := fmt.Fprintf(w, "data: %s\n\n", out); werr != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if err != nil {
			return
		}
	}
}

func writeV1(w http.ResponseWriter, id, result any, err error) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(v1Response(id, result, err))
}

// v1Codes are the JSON-RPC codes of the A2A errors, as both versions number
// them.
var v1Codes = []struct {
	err  error
	code int
}{
	{a2a.ErrParseError, -32700}, {a2a.ErrInvalidRequest, -32600}, {a2a.ErrMethodNotFound, -32601},
	{a2a.ErrInvalidParams, -32602}, {a2a.ErrTaskNotFound, -32001}, {a2a.ErrTaskNotCancelable, -32002},
	{a2a.ErrPushNotificationNotSupported, -32003}, {a2a.ErrUnsupportedOperation, -32004},
}

func v1Response(id, result any, err error) []byte {
	resp := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		code := -32603
		for _, c := range v1Codes {
			if errors.Is(err, c.err) {
				code = c.code
				break
			}
		}
		// The message says what was wrong, as the 0.3 side's does.
		resp["error"] = map[string]any{"code": code, "message": err.Error()}
	} else {
		resp["result"] = result
	}
	out, merr := json.Marshal(resp)
	if merr != nil {
		out, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": merr.Error()}})
	}
	return out
}

// v1State is a task state's 1.0 enum name.
func v1State(s a2a.TaskState) string {
	if s == "" || s == a2a.TaskStateUnknown {
		return "TASK_STATE_UNSPECIFIED"
	}
	return "TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(string(s), "-", "_"))
}

func v1Parts(parts a2a.ContentParts) []v1Part {
	out := make([]v1Part, 0, len(parts))
	for _, p := range parts {
		switch p := p.(type) {
		case a2a.TextPart:
			text := p.Text
			out = append(out, v1Part{Text: &text, Metadata: p.Metadata})
		case a2a.DataPart:
			out = append(out, v1Part{Data: p.Data, Metadata: p.Metadata})
		}
	}
	return out
}

func v1Msg(m *a2a.Message) map[string]any {
	if m == nil {
		return nil
	}
	role := "ROLE_AGENT"
	if m.Role == a2a.MessageRoleUser {
		role = "ROLE_USER"
	}
	return map[string]any{"messageId": m.ID, "role": role, "parts": v1Parts(m.Parts)}
}

func v1Status(s a2a.TaskStatus) map[string]any {
	out := map[string]any{"state": v1State(s.State)}
	if s.Message != nil {
		out["message"] = v1Msg(s.Message)
	}
	return out
}

func v1Artifact(a *a2a.Artifact) map[string]any {
	return map[string]any{"artifactId": string(a.ID), "name": a.Name, "parts": v1Parts(a.Parts)}
}

func v1Task(t *a2a.Task) map[string]any {
	out := map[string]any{"id": string(t.ID), "contextId": t.ContextID, "status": v1Status(t.Status)}
	if len(t.Artifacts) > 0 {
		arts := make([]map[string]any, len(t.Artifacts))
		for i, a := range t.Artifacts {
			arts[i] = v1Artifact(a)
		}
		out["artifacts"] = arts
	}
	if len(t.Metadata) > 0 {
		out["metadata"] = t.Metadata
	}
	return out
}

// v1Event is a stream event as a 1.0 StreamResponse.
func v1Event(ev a2a.Event) map[string]any {
	switch ev := ev.(type) {
	case *a2a.Task:
		return map[string]any{"task": v1Task(ev)}
	case *a2a.TaskStatusUpdateEvent:
		return map[string]any{"statusUpdate": map[string]any{"taskId": string(ev.TaskID), "contextId": ev.ContextID, "status": v1Status(ev.Status)}}
	case *a2a.TaskArtifactUpdateEvent:
		return map[string]any{"artifactUpdate": map[string]any{"taskId": string(ev.TaskID), "contextId": ev.ContextID,
			"artifact": v1Artifact(ev.Artifact), "append": ev.Append, "lastChunk": ev.LastChunk}}
	case *a2a.Message:
		return map[string]any{"message": v1Msg(ev)}
	}
	return map[string]any{}
}
