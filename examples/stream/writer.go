package main

//go:generate go run github.com/lasergo/laser/cmd/lasergen

import (
	"strings"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Prompt asks the writer for a story.
type Prompt struct {
	Topic string `json:"topic"`
	// FailAfter makes the writer fail after this many words (0: never), to
	// show a stream that breaks halfway.
	FailAfter int `json:"fail_after,omitempty"`
}

// Token is one piece of the answer: a word, as a language model would emit.
type Token struct {
	Text string `json:"text"`
}

// Writer streams stories word by word.
//
//laser:agent id=writer listen=agent.commands respond=agent.responses ct=json
type Writer struct{}

// story is what the writer tells, whatever the topic.
const story = "once upon a time a log kept every word"

// Draft streams the story one word per chunk; it fails with an AGDX error
// after FailAfter words when asked to, and the caller sees that error after
// the words that came before it.
//
//laser:handle op=draft
func (w *Writer) Draft(ctx *runtime.Ctx, in Prompt, out *runtime.Stream[Token]) error {
	for i, word := range strings.Fields(story) {
		if in.FailAfter > 0 && i == in.FailAfter {
			return runtime.Failf(wire.ErrorInternal, "the model went away")
		}
		if err := out.Send(Token{Text: word}); err != nil {
			return err
		}
	}
	return nil
}
