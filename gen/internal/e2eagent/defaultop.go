package e2eagent

import (
	"strings"

	"github.com/lasergo/laser/runtime"
)

// Text is a piece of text.
type Text struct{ Text string }

// Echo has one command operation, so a command without an operation (the
// reference SDK's contract) is routed to it without a default= naming it.
//
//laser:agent id=echo listen=echo.commands respond=echo.responses
type Echo struct{}

// Shout answers with the text in capitals.
//
//laser:handle op=shout
func (e *Echo) Shout(ctx *runtime.Ctx, in Text) (Text, error) {
	return Text{Text: strings.ToUpper(in.Text)}, nil
}

// Heard is an event; it is no command operation, so Echo still has one.
//
//laser:event op=heard
func (e *Echo) Heard(ctx *runtime.Ctx, in Text) error { return nil }

// Desk has two command operations and names the one a command without an
// operation goes to.
//
//laser:agent id=desk listen=desk.commands respond=desk.responses default=reverse
type Desk struct{}

// Reverse answers with the text reversed.
//
//laser:handle op=reverse
func (d *Desk) Reverse(ctx *runtime.Ctx, in Text) (Text, error) {
	r := []rune(in.Text)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return Text{Text: string(r)}, nil
}

// Count answers with the text's length.
//
//laser:handle op=count
func (d *Desk) Count(ctx *runtime.Ctx, in Text) (int, error) { return len(in.Text), nil }
