// Package e2eagent is lasergen's end-to-end fixture: a billing agent written
// as plain annotated methods, with its committed generated file, driven over
// the embedded log by the tests beside it.
package e2eagent

//go:generate go tool lasergen

import (
	"errors"
	"fmt"

	"github.com/lasergo/laser/gen/internal/e2eagent/billingapi"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// ChargeCard asks to charge a card.
type ChargeCard struct {
	Card  string
	Cents int64
}

// Charged is the receipt of a charge.
type Charged struct {
	Charge string
	Cents  int64
}

// QuoteRequest asks what a charge would cost with fees.
type QuoteRequest struct {
	Cents int64 `json:"cents"`
}

// Quote is the answer to a QuoteRequest.
type Quote struct {
	Cents int64 `json:"cents"`
	Fee   int64 `json:"fee"`
}

// Settle asks to settle the day's charges.
type Settle struct{ Day string }

// Void asks to cancel a charge.
type Void struct{ Charge string }

// Billing is the agent: every channel reports what a handler saw, so tests
// wait on outcomes instead of sleeping.
//
//laser:agent id=billing listen=billing.commands respond=billing.responses
type Billing struct {
	Refunds  chan *billingapi.Refund
	Expired  chan billingapi.CardExpired
	Settles  chan int // the attempt number of each Settle call
	Voids    chan string
	Flakes   chan int
	attempts map[string]int
}

// NewBilling returns an agent implementation with buffered report channels.
func NewBilling() *Billing {
	return &Billing{
		Refunds:  make(chan *billingapi.Refund, 8),
		Expired:  make(chan billingapi.CardExpired, 8),
		Settles:  make(chan int, 8),
		Voids:    make(chan string, 8),
		Flakes:   make(chan int, 8),
		attempts: make(map[string]int),
	}
}

// Charge charges a card: a request/response operation over CBOR. A charge
// of no money fails with an invalid-request answer to the caller.
//
//laser:handle op=charge
func (b *Billing) Charge(ctx *runtime.Ctx, in ChargeCard) (Charged, error) {
	if in.Cents <= 0 {
		return Charged{}, runtime.Failf(wire.ErrorInvalidRequest, "cannot charge %d cents", in.Cents)
	}
	return Charged{Charge: "ch-" + in.Card, Cents: in.Cents}, nil
}

// Quote prices a charge: request/response over JSON with pointer input and
// output.
//
//laser:handle op=quote ct=json
func (b *Billing) Quote(ctx *runtime.Ctx, in *QuoteRequest) (*Quote, error) {
	return &Quote{Cents: in.Cents, Fee: in.Cents / 50}, nil
}

// Refund is a command over JSON whose input comes from another package.
//
//laser:handle op=refund ct=json
func (b *Billing) Refund(ctx *runtime.Ctx, in *billingapi.Refund) error {
	b.Refunds <- in
	return nil
}

// CardExpired handles the issuer's AGDX event.
//
//laser:event op=card.expired
func (b *Billing) CardExpired(ctx *runtime.Ctx, in billingapi.CardExpired) error {
	b.Expired <- in
	return nil
}

// Settle fails once with a retryable error and succeeds on the retry. The
// consumer runs one message at a time, so the attempts map needs no lock.
//
//laser:handle op=settle
func (b *Billing) Settle(ctx *runtime.Ctx, in Settle) error {
	b.attempts[in.Day]++
	n := b.attempts[in.Day]
	b.Settles <- n
	if n == 1 {
		return fmt.Errorf("ledger for %s is busy", in.Day)
	}
	return nil
}

// Void refuses every void permanently, so it is never retried.
//
//laser:handle op=void
func (b *Billing) Void(ctx *runtime.Ctx, in Void) error {
	b.Voids <- in.Charge
	return runtime.Reject(errors.New("voids are closed"))
}

// Note is a command that does nothing, so benchmarks can send it in a loop.
//
//laser:handle op=note ct=json
func (b *Billing) Note(ctx *runtime.Ctx, in *billingapi.Refund) error { return nil }

// Flake always fails with a retryable error, until the attempts run out.
//
//laser:handle op=flake
func (b *Billing) Flake(ctx *runtime.Ctx, in Void) error {
	b.attempts["flake"]++
	b.Flakes <- b.attempts["flake"]
	return errors.New("still flaky")
}
