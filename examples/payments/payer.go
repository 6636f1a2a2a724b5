package main

//go:generate go tool lasergen

import (
	"encoding/json"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TopicTransfers is where the payer hands transfers to the bank: the effect
// the policy governs.
const TopicTransfers = "bank.transfers"

// Transfer asks for money to move.
type Transfer struct {
	To    string `json:"to"`
	Cents int64  `json:"cents"`
}

// Receipt says a transfer went out.
type Receipt struct {
	To    string `json:"to"`
	Cents int64  `json:"cents"`
}

// Payer wires funds. Its handler declares its effects as payments on
// personal data, so the governor sees every transfer it sends as such.
//
//laser:agent id=payer listen=payments.commands respond=agent.responses ct=json
type Payer struct{}

// WireFunds sends the transfer to the bank.
//
//laser:handle op=wire-funds effect=payment data=pii
func (p *Payer) WireFunds(ctx *runtime.Ctx, in Transfer) (Receipt, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return Receipt{}, runtime.Reject(err)
	}
	// A refusal by the policy is permanent (or, when deferred, retried):
	// the handler returns it as is.
	transfer := runtime.Out{Kind: wire.KindEvent, Topic: TopicTransfers, Body: body}
	if _, err := ctx.Client().Send(ctx, transfer, runtime.WithOperation("transfer"), runtime.WithContentType(wire.ContentJSON)); err != nil {
		return Receipt{}, err
	}
	return Receipt(in), nil
}
