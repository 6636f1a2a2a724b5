package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/govern"
)

// Policy is the payments policy: transfers go only to approved
// beneficiaries, and a transfer above the limit needs two of the
// treasurers' approvals. Every other effect is allowed.
type Policy struct {
	Approved   map[string]bool
	LimitCents int64
	Treasurers []string
}

// The policy's name and version, recorded with each decision.
const (
	policyID      = "payments"
	policyVersion = "2026-03"
)

// Decide judges one effect. A payment is what a handler declaring
// effect=payment sends on; its answers to the caller move no money.
func (p *Policy) Decide(_ context.Context, a *govern.Action) (govern.Decision, error) {
	if a.Claims.EffectClass != "payment" || a.Kind == effect.Response || a.Kind == effect.Error {
		return govern.Allow(), nil
	}
	var t Transfer
	if err := json.Unmarshal(a.Body, &t); err != nil {
		return govern.Block("a payment whose body is no transfer").WithPolicy(policyID, policyVersion), nil
	}
	switch {
	case !p.Approved[t.To]:
		return govern.Block(fmt.Sprintf("beneficiary %s is not approved", t.To)).WithPolicy(policyID, policyVersion), nil
	case t.Cents > p.LimitCents:
		q := govern.Quorum{Rule: govern.NOfM, N: 2, Voters: p.Treasurers, Within: time.Minute}
		return govern.Propose(q, fmt.Sprintf("%s is above the %s limit", dollars(t.Cents), dollars(p.LimitCents))).WithPolicy(policyID, policyVersion), nil
	}
	return govern.Allow(), nil
}

func dollars(cents int64) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }
