package runtime

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// verdict is what a gate decided about a decoded message: pass (the zero
// value), or the outcome that ends its record there. A gate only decides
// and remembers (a replay or fence window); whoever runs it acts on the
// verdict (the pipeline dead-letters a parked record, the warm-up skips
// it), so the same gate serves every path.
type verdict struct {
	o      outcome  // handled: passed
	gate   DropGate // what dropped it, for dropped
	reason wire.DeadLetterReason
	detail string
	err    error // the cause, for parked

	note  string // what the pipeline logs, at level, with attrs
	level slog.Level
	attrs []any
}

func (v verdict) passed() bool { return v.o == handled }

// aheadRule is what the claim pre-filter, which claims a batch's
// idempotency keys before the first record reaches any gate, makes of a
// gate.
type aheadRule uint8

const (
	// aheadRun: the gate reads only the message and the configuration, so
	// the pre-filter runs it and claims no key of a record it stops.
	aheadRun aheadRule = iota
	// aheadClaim: the gate remembers what it saw (a window), so running it
	// ahead would judge the record twice; the pre-filter claims the key,
	// and a record the gate stops leaves its claim unused (released).
	aheadClaim
	// aheadNone: while the gate is on, no key can be claimed ahead: it
	// decides the scope of the keys (the verified principal), and the
	// dedup gate claims key by key.
	aheadNone
)

// gateStep is one entry of gateSteps.
type gateStep struct {
	name string
	// on reports whether the gate runs under c's configuration; nil: always.
	on    func(c *Consumer) bool
	ahead aheadRule
	check func(c *Consumer, m *Message) verdict
}

// gateSteps are the gates a decoded record passes, in order, before the
// dedup gate and the handler. The pipeline runs them (runGates), the
// warm-up replays them on what the group already consumed (passedGates),
// and the claim pre-filter derives from them which keys to claim ahead
// (claimsAhead, passesAhead): a new gate is one entry here.
var gateSteps = [...]gateStep{
	{name: "target", ahead: aheadRun, check: (*Consumer).targetGate},
	{name: "signature", on: func(c *Consumer) bool { return c.cfg.Verifier != nil }, ahead: aheadNone, check: (*Consumer).signatureGate},
	// Before dedup: a stale holder's replay must not burn the idempotency
	// slot that the current holder's retry needs.
	{name: "fence", ahead: aheadClaim, check: (*Consumer).fenceGate},
}

// gatesOn returns the gates that run under c's configuration, in order.
func gatesOn(c *Consumer) []*gateStep {
	var on []*gateStep
	for i := range gateSteps {
		if g := &gateSteps[i]; g.on == nil || g.on(c) {
			on = append(on, g)
		}
	}
	return on
}

// runGates runs the consumer's gates over m until one stops it; the
// verdict is a pass when none did.
func (c *Consumer) runGates(ctx context.Context, m *Message) verdict {
	for _, g := range c.gates {
		if v := g.check(c, m); !v.passed() {
			if v.note != "" && c.log.Enabled(ctx, v.level) {
				c.log.Log(ctx, v.level, v.note, append(v.attrs, "source", m.Position.String())...)
			}
			return v
		}
	}
	return verdict{}
}

// passedGates replays the gates for a record the warm-up read back: true
// when the live path let it through to the dedup gate. The windows the
// gates keep (replay, fence) are warmed on the way.
func (c *Consumer) passedGates(m *Message) bool {
	for _, g := range c.gates {
		if !g.check(c, m).passed() {
			return false
		}
	}
	return true
}

// claimsAhead reports whether the claim pre-filter may claim keys before
// the gates ran: no gate that is on forbids it.
func (c *Consumer) claimsAhead() bool {
	for _, g := range c.gates {
		if g.ahead == aheadNone {
			return false
		}
	}
	return true
}

// passesAhead reports whether m passes the gates the pre-filter can run
// ahead, so its key is worth claiming.
func (c *Consumer) passesAhead(m *Message) bool {
	for _, g := range c.gates {
		if g.ahead == aheadRun && !g.check(c, m).passed() {
			return false
		}
	}
	return true
}

// targetGate skips a message addressed to another agent: it is not ours.
func (c *Consumer) targetGate(m *Message) verdict {
	if t := m.Provenance.Target; t != "" && c.cfg.Agent != "" && t != c.cfg.Agent {
		return verdict{o: skipped, note: "skipping message targeted at another agent", level: slog.LevelDebug, attrs: []any{"target", t}}
	}
	return verdict{}
}

// signatureGate parks a message whose signature, source binding or
// destination binding fails, and drops the replay of a signed record the
// replay window saw (parks one older than what it forgot).
func (c *Consumer) signatureGate(m *Message) verdict {
	verified, err := m.verifyWith(c.cfg.Verifier, c.cfg.Binding)
	if err != nil {
		return verdict{o: parked, reason: wire.ReasonRejected, detail: "signature verification failed",
			err:  &Error{Code: CodeSignature, Msg: "signature verification failed", Err: err},
			note: "unsigned or unverified message on a verified topic", level: slog.LevelWarn, attrs: []any{"error", err}}
	}
	m.VerifiedPrincipal = verified.Principal
	// A valid signature proves authorship, not first delivery: anyone able to
	// write the topic can replay the signed bytes.
	if rec := m.Envelope.Record; rec != nil {
		iat, _ := sign.IssuedAt(m.Envelope)
		switch c.replay.admit(*rec, verified.Principal, iat) {
		case replayed:
			return verdict{o: dropped, gate: DropReplay, note: "dropping replayed signed record", level: slog.LevelWarn, attrs: []any{"record", rec.String()}}
		case pastHorizon:
			err := fmt.Errorf("%w: issued at %d, before what the replay window of %q forgot", sign.ErrStale, iat, verified.Principal)
			return verdict{o: parked, reason: wire.ReasonRejected, detail: "signature verification failed",
				err: &Error{Code: CodeSignature, Msg: "signature verification failed", Err: err}}
		}
	}
	return verdict{}
}

// fenceGate drops a message whose fence token a newer one of its sender
// and conversation superseded.
func (c *Consumer) fenceGate(m *Message) verdict {
	if f := m.Provenance.Fence; f != nil && !c.fences.accept(c.senderScope(m), m.Provenance.Conversation, *f, micros(c.clock.Now())) {
		return verdict{o: dropped, gate: DropFence, note: "dropping message with a superseded fence", level: slog.LevelDebug, attrs: []any{"fence", *f}}
	}
	return verdict{}
}
