// Package desk is the agent the bridges' tests expose: a request, a
// command, an event and a stream, in CBOR so every bridge converts from JSON and
// back through the generated Go types.
package desk

//go:generate go tool lasergen

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// QuoteRequest asks for the price of an item.
type QuoteRequest struct {
	// SKU names the item.
	SKU string `json:"sku"`
	// Qty is how many; zero or less is refused.
	Qty  int    `json:"qty"`
	Note string `json:"note,omitempty"`
}

// Quote is the price of a request.
type Quote struct {
	SKU   string `json:"sku"`
	Cents int64  `json:"cents"`
}

// Order places an order.
type Order struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

// Restock says an item is back in stock.
type Restock struct {
	SKU string `json:"sku"`
}

// Word is what Spell spells.
type Word struct {
	Text string `json:"text"`
}

// Letter is one piece of a spelled word.
type Letter struct {
	Char string `json:"char"`
}

// Desk answers quotes, takes orders and spells words.
//
//laser:agent id=desk listen=desk.commands respond=agent.responses
type Desk struct {
	// Orders receives every order taken, and Restocks every restock event,
	// when set.
	Orders   chan<- Order
	Restocks chan<- Restock
}

// Quote prices an item at 250 cents each.
//
//laser:handle op=quote
func (d *Desk) Quote(_ *runtime.Ctx, in QuoteRequest) (Quote, error) {
	if in.Qty <= 0 {
		return Quote{}, runtime.Reject(fmt.Errorf("qty must be positive, got %d", in.Qty))
	}
	return Quote{SKU: in.SKU, Cents: 250 * int64(in.Qty)}, nil
}

// Order takes an order without answering.
//
//laser:handle op=order
func (d *Desk) Order(ctx *runtime.Ctx, in Order) error {
	if d.Orders != nil {
		select {
		case d.Orders <- in:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Restocked notes an item back in stock.
//
//laser:event op=restocked
func (d *Desk) Restocked(ctx *runtime.Ctx, in Restock) error {
	if d.Restocks != nil {
		select {
		case d.Restocks <- in:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Spell streams the word one letter per chunk; it fails at a "!", after
// the letters before it.
//
//laser:handle op=spell
func (d *Desk) Spell(_ *runtime.Ctx, in Word, out *runtime.Stream[Letter]) error {
	for _, r := range strings.Split(in.Text, "") {
		if r == "!" {
			return runtime.Failf(wire.ErrorToolFailure, "cannot spell %q", r)
		}
		if err := out.Send(Letter{Char: r}); err != nil {
			return err
		}
	}
	return nil
}

// Start runs d on client until the test ends.
func Start(t *testing.T, client *runtime.Client, d *Desk) {
	t.Helper()
	if err := client.Transport().EnsureTopics(t.Context(), 1, DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	a, err := NewDeskAgent(client, d)
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(context.WithoutCancel(t.Context()))
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	if err := h.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// StartSigned is Start for a desk that signs its answers with key and
// verifies what it handles with v.
func StartSigned(t *testing.T, client *runtime.Client, d *Desk, key *sign.Key, v runtime.Verifier) {
	t.Helper()
	if err := client.Transport().EnsureTopics(t.Context(), 1, DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	cfg := DeskAgentConfig(d)
	cfg.SigningKey, cfg.Verifier = key, v
	a, err := client.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := a.Start(context.WithoutCancel(t.Context()))
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	if err := h.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
}
