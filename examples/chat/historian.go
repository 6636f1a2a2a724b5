package main

//go:generate go tool lasergen

import (
	"fmt"
	"strings"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Question is what the front desk passes on.
type Question struct {
	Text string `json:"text"`
}

// Answer is the historian's reply.
type Answer struct {
	Text string `json:"text"`
}

// Historian answers from the conversation so far. Its "model" is a
// sentence built from the context: a real agent would hand the same history
// to a language model.
//
//laser:agent id=historian listen=agent.commands respond=agent.responses ct=json
type Historian struct{}

// Ask answers a question. The generated dispatch reads the conversation
// back from the log (agent.commands and agent.responses, the last 50
// records) and passes it in as history.
//
//laser:handle op=ask context=last:50
func (h *Historian) Ask(ctx *runtime.Ctx, in Question, history conversation.History) (Answer, error) {
	var said []string
	for _, m := range (conversation.ByAgent{"desk"}).Select(history) {
		var q Question
		if err := m.Decode(&q, wire.ContentJSON); err == nil {
			said = append(said, q.Text)
		}
	}
	answered := len(conversation.ByAgent{"historian"}.Select(history))
	return Answer{Text: fmt.Sprintf("%d turns so far, %d answered; you said: %s",
		len(history), answered, strings.Join(said, " / "))}, nil
}
