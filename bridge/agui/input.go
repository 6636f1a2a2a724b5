package agui

import (
	"encoding/json"
	"strings"

	"github.com/lasergo/laser/wire"
)

// RunInput is the run a POSTed AG-UI RunAgentInput asks for, as
// Handler.Run gets it.
type RunInput struct {
	// Thread is the conversation: the input's threadId.
	Thread wire.ID
	// RunID is the client's name for the run.
	RunID string
	// Messages are the thread's messages as the client holds them, oldest
	// first.
	Messages []InputMessage
}

// InputMessage is one message of a RunAgentInput.
type InputMessage struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	// Content is the message's text: AG-UI's string content, or its text
	// parts joined when the content is a list of parts.
	Content string `json:"-"`
}

// UnmarshalJSON reads a message whose content is a string or a list of
// parts (only text parts are kept).
func (m *InputMessage) UnmarshalJSON(b []byte) error {
	var w struct {
		ID      string          `json:"id"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = InputMessage{ID: w.ID, Role: w.Role}
	if json.Unmarshal(w.Content, &m.Content) == nil {
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(w.Content, &parts) == nil {
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				sb.WriteString(p.Text)
			}
		}
		m.Content = sb.String()
	}
	return nil
}

// LastUserText is the content of the last user message, what a run usually
// answers; empty when there is none.
func (in RunInput) LastUserText() string {
	for i := len(in.Messages) - 1; i >= 0; i-- {
		if in.Messages[i].Role == "user" {
			return in.Messages[i].Content
		}
	}
	return ""
}
