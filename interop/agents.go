package interop

//go:generate go tool lasergen

import (
	"strings"

	"github.com/lasergo/laser/runtime"
)

// Article is a text to summarize; its JSON is what a reference agent sends.
type Article struct {
	Text string `json:"text"`
}

// Summary is a Summarizer's answer.
type Summary struct {
	Text  string `json:"text"`
	Words int    `json:"words"`
}

// Summarizer is the Go agent a reference contract reaches: its one
// //laser:handle operation takes the contract's operation-less command.
//
//laser:agent id=go-summarizer listen=agent.commands respond=agent.responses ct=json
type Summarizer struct{}

// Summarize answers with the first sentence of the text and its word count.
//
//laser:handle op=summarize
func (s *Summarizer) Summarize(ctx *runtime.Ctx, in Article) (Summary, error) {
	first, _, _ := strings.Cut(in.Text, ".")
	return Summary{Text: strings.TrimSpace(first), Words: len(strings.Fields(in.Text))}, nil
}

// Desk has two command operations; a reference contract reaches the one its
// default= names.
//
//laser:agent id=go-desk listen=agent.commands respond=agent.responses ct=json default=summarize
type Desk struct{}

// Summarize answers with the text's first sentence.
//
//laser:handle op=summarize
func (d *Desk) Summarize(ctx *runtime.Ctx, in Article) (Summary, error) {
	return (&Summarizer{}).Summarize(ctx, in)
}

// Count answers with the text's word count only.
//
//laser:handle op=count
func (d *Desk) Count(ctx *runtime.Ctx, in Article) (Summary, error) {
	return Summary{Words: len(strings.Fields(in.Text))}, nil
}
