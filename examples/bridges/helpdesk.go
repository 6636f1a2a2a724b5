package main

//go:generate go tool lasergen

import (
	"fmt"
	"strings"

	"github.com/lasergo/laser/runtime"
)

// Ticket is a customer's message to the help desk.
type Ticket struct {
	// Customer names who wrote.
	Customer string `json:"customer"`
	// Text is what they wrote; an empty one is refused.
	Text string `json:"text"`
}

// Verdict sorts a ticket.
type Verdict struct {
	// Category is billing, outage or general.
	Category string `json:"category"`
	Urgent   bool   `json:"urgent"`
}

// Helpdesk classifies tickets and drafts replies.
//
//laser:agent id=helpdesk listen=helpdesk.commands respond=agent.responses ct=json
type Helpdesk struct{}

// Classify sorts a ticket into billing, outage or general, and says whether
// it is urgent.
//
//laser:handle op=classify
func (h *Helpdesk) Classify(_ *runtime.Ctx, in Ticket) (Verdict, error) {
	text := strings.ToLower(strings.TrimSpace(in.Text))
	switch {
	case text == "":
		return Verdict{}, runtime.Reject(fmt.Errorf("the ticket has no text"))
	case strings.Contains(text, "down"):
		return Verdict{Category: "outage", Urgent: true}, nil
	case strings.Contains(text, "charged"), strings.Contains(text, "refund"):
		return Verdict{Category: "billing"}, nil
	}
	return Verdict{Category: "general"}, nil
}

// Reply drafts the answer to a ticket, word by word as a model would; an
// empty ticket is refused.
//
//laser:handle op=reply
func (h *Helpdesk) Reply(_ *runtime.Ctx, in Ticket, out *runtime.Stream[string]) error {
	if strings.TrimSpace(in.Text) == "" {
		return runtime.Reject(fmt.Errorf("the ticket has no text"))
	}
	for _, word := range strings.Fields("Hello " + in.Customer + ", we are on it.") {
		if err := out.Send(word + " "); err != nil {
			return err
		}
	}
	return nil
}
