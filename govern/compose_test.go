package govern_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// says is a governor that always decides d.
func says(d govern.Decision) govern.Governor {
	return govern.GovernorFunc(func(context.Context, *govern.Action) (govern.Decision, error) { return d, nil })
}

func decide(t *testing.T, g govern.Governor) (govern.Decision, error) {
	t.Helper()
	return g.Decide(t.Context(), &govern.Action{Kind: effect.Publish, Topic: "payments", Body: []byte("40 EUR")})
}

func TestPanelNeedsEveryVoterByDefault(t *testing.T) {
	p := &govern.Panel{Voters: []govern.Voter{{Name: "risk", Governor: says(govern.Allow())}, {Name: "budget", Governor: says(govern.Block("over budget"))}}}
	d, err := decide(t, p)
	if err != nil || d.Verdict != govern.VerdictBlock || d.Reason != "risk: allow; budget: block (over budget)" {
		t.Fatalf("Decide = %+v, %v; want a block naming both votes", d, err)
	}
}

func TestPanelNeedOfOnePassesOnOneYes(t *testing.T) {
	p := &govern.Panel{Need: 1, Voters: []govern.Voter{{Name: "a", Governor: says(govern.Defer("later"))}, {Name: "b", Governor: says(govern.Modify([]byte("redacted"), "pii"))}}}
	d, err := decide(t, p)
	if err != nil || d.Verdict != govern.VerdictModify || string(d.Body) != "redacted" {
		t.Fatalf("Decide = %+v, %v; want b's Modify kept", d, err)
	}
}

func TestPanelMandatoryVoterVetoes(t *testing.T) {
	p := &govern.Panel{Need: 1, Voters: []govern.Voter{{Name: "a", Governor: says(govern.Allow())}, {Name: "legal", Mandatory: true, Governor: says(govern.StepUp("payments", "ask a human"))}}}
	d, err := decide(t, p)
	if err != nil || d.Verdict != govern.VerdictStepUp || d.Scope != "payments" {
		t.Fatalf("Decide = %+v, %v; want the mandatory voter's step-up", d, err)
	}
}

func TestPanelTakesTheFirmestNo(t *testing.T) {
	p := &govern.Panel{Voters: []govern.Voter{{Name: "a", Governor: says(govern.Defer("later"))}, {Name: "b", Governor: says(govern.Block("no"))}}}
	if d, _ := decide(t, p); d.Verdict != govern.VerdictBlock {
		t.Fatalf("Decide = %s, want block over defer", d.Verdict)
	}
}

func TestPanelRefusesWhatCannotBeDecided(t *testing.T) {
	boom := errors.New("policy store down")
	for name, p := range map[string]*govern.Panel{
		"no voters":    {},
		"need too big": {Need: 3, Voters: []govern.Voter{{Name: "a", Governor: says(govern.Allow())}}},
		"no name":      {Voters: []govern.Voter{{Governor: says(govern.Allow())}}},
		"voter error": {Voters: []govern.Voter{{Name: "flaky", Governor: govern.GovernorFunc(func(context.Context, *govern.Action) (govern.Decision, error) {
			return govern.Decision{}, boom
		})}}},
	} {
		if _, err := decide(t, p); err == nil {
			t.Errorf("%s: decided without an error", name)
		}
	}
}

func TestSwappableUsesThePolicyInForce(t *testing.T) {
	s, err := govern.NewSwappable(says(govern.Allow()))
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := decide(t, s); d.Verdict != govern.VerdictAllow {
		t.Fatalf("before the swap: %s", d.Verdict)
	}
	if _, err := s.Swap(says(govern.Block("frozen"))); err != nil {
		t.Fatal(err)
	}
	if d, _ := decide(t, s); d.Verdict != govern.VerdictBlock {
		t.Fatalf("after the swap: %s, want block", d.Verdict)
	}
	if _, err := s.Swap(nil); err == nil {
		t.Error("a nil governor was swapped in")
	}
}

// TestCountingBoundsASessionThroughTheGate runs a request budget through a
// gate on every log: two publishes pass, the third is blocked and recorded.
func TestCountingBoundsASessionThroughTheGate(t *testing.T) {
	for _, tr := range featuretest.Transports(t, "govern_counting") {
		t.Run(tr.Name, func(t *testing.T) {
			ctx := t.Context()
			budget, err := govern.NewCounting(func(_ context.Context, a *govern.Action, c govern.Counters) (govern.Decision, error) {
				if c.Effects >= 2 {
					return govern.Block("session budget of 2 effects spent"), nil
				}
				return govern.Allow(), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			log := tr.New(t)
			if err := runtime.NewClient(log, runtime.ClientConfig{}).Bootstrap(ctx, 1, "payments"); err != nil {
				t.Fatal(err)
			}
			c := runtime.NewClient(log, runtime.ClientConfig{EffectGate: govern.NewGate(budget, govern.Config{})})
			for i := range 3 {
				_, err := c.Send(ctx, runtime.Out{Kind: wire.KindEvent, Topic: "payments", From: "payer", Body: []byte("40 EUR")})
				if blocked := err != nil; blocked != (i == 2) {
					t.Fatalf("publish %d: %v", i, err)
				}
			}
			got := budget.Counters()
			if got.Effects != 2 || got.Bytes == 0 || got.Verdicts[govern.VerdictAllow] != 2 || got.Verdicts[govern.VerdictBlock] != 1 {
				t.Errorf("counters = %+v", got)
			}
			entries, err := govern.ReadAudit(ctx, log, "")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(entries, func(e govern.Entry) bool {
				return e.Evidence != nil && strings.Contains(e.Evidence.Reason, "budget of 2")
			}) {
				t.Errorf("the block is not among the %d entries of the audit topic", len(entries))
			}
		})
	}
}

func TestCountingRefusesANilPolicy(t *testing.T) {
	if _, err := govern.NewCounting(nil); err == nil {
		t.Error("a nil policy was accepted")
	}
}
