package govern

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/lasergo/laser/effect"
)

// Voter is one governor on a Panel.
type Voter struct {
	// Name is how the panel's reason names the voter's verdict.
	Name     string
	Governor Governor
	// Mandatory voters must say yes whatever the panel needs.
	Mandatory bool
}

// Panel is a Governor made of voters deciding the same action at once. An
// Allow or Modify is a yes; every other verdict is a no. The action
// proceeds when every mandatory voter and at least Need voters say yes
// (Need 0: all of them); it then takes the first Modify in voter order, or
// Allow. Otherwise the panel's verdict is the firmest no: Block, then
// StepUp, then Propose, then Defer, the first of its kind in voter order.
// The reason lists every voter's verdict. A voter's error, or a panel that
// cannot be met (no voters, Need above their number, a voter without a name
// or governor), is an error, which the gate treats as a refusal.
type Panel struct {
	Need   int
	Voters []Voter
}

// check refuses a panel that no vote could satisfy or name.
func (p *Panel) check() error {
	if len(p.Voters) == 0 {
		return errors.New("govern: panel has no voters")
	}
	if p.Need < 0 || p.Need > len(p.Voters) {
		return fmt.Errorf("govern: panel needs %d yes votes of %d voters", p.Need, len(p.Voters))
	}
	for i, v := range p.Voters {
		if v.Name == "" || v.Governor == nil {
			return fmt.Errorf("govern: panel voter %d has no name or no governor", i)
		}
	}
	return nil
}

// Decide runs every voter on a and combines their decisions.
func (p *Panel) Decide(ctx context.Context, a *Action) (Decision, error) {
	if err := p.check(); err != nil {
		return Decision{}, err
	}
	ds := make([]Decision, len(p.Voters))
	errs := make([]error, len(p.Voters))
	var wg sync.WaitGroup
	for i, v := range p.Voters {
		wg.Go(func() { ds[i], errs[i] = v.Governor.Decide(ctx, a) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return Decision{}, fmt.Errorf("govern: panel voter %s: %w", p.Voters[i].Name, err)
		}
	}
	need := p.Need
	if need == 0 {
		need = len(p.Voters)
	}
	yes, mandatoryNo := 0, false
	votes := make([]string, len(ds))
	for i, d := range ds {
		votes[i] = p.Voters[i].Name + ": " + string(d.Verdict)
		if d.Reason != "" {
			votes[i] += " (" + d.Reason + ")"
		}
		switch {
		case affirmative(d.Verdict):
			yes++
		case p.Voters[i].Mandatory:
			mandatoryNo = true
		}
	}
	reason := strings.Join(votes, "; ")
	if yes >= need && !mandatoryNo {
		if d, ok := first(ds, VerdictModify); ok {
			d.Reason = reason
			return d, nil
		}
		return Decision{Verdict: VerdictAllow, Reason: reason}, nil
	}
	for _, v := range []Verdict{VerdictBlock, VerdictStepUp, VerdictPropose, VerdictDefer} {
		if d, ok := first(ds, v); ok {
			d.Reason = reason
			return d, nil
		}
	}
	// Not met with nobody saying no: a mandatory voter said yes too little.
	return Block(reason), nil
}

func affirmative(v Verdict) bool { return v == VerdictAllow || v == VerdictModify }

// first returns the first decision of verdict v.
func first(ds []Decision, v Verdict) (Decision, bool) {
	for _, d := range ds {
		if d.Verdict == v {
			return d, true
		}
	}
	return Decision{}, false
}

// Swappable is a Governor whose policy can be replaced while the gate runs:
// a config reload or an operator swaps it, and the next decision uses the
// new one. A decision in flight finishes under the policy it started with;
// evidence already on the log is never reinterpreted.
type Swappable struct {
	cur atomic.Pointer[Governor]
}

// NewSwappable returns a swappable governor starting with initial.
func NewSwappable(initial Governor) (*Swappable, error) {
	s := &Swappable{}
	if _, err := s.Swap(initial); err != nil {
		return nil, err
	}
	return s, nil
}

// Swap installs next and returns the policy it replaced; a nil next is
// refused.
func (s *Swappable) Swap(next Governor) (Governor, error) {
	if next == nil {
		return nil, errors.New("govern: swap in a nil governor")
	}
	prev := s.cur.Swap(&next)
	if prev == nil {
		return nil, nil
	}
	return *prev, nil
}

// Current returns the policy in force.
func (s *Swappable) Current() Governor { return *s.cur.Load() }

// Decide asks the policy in force.
func (s *Swappable) Decide(ctx context.Context, a *Action) (Decision, error) {
	return s.Current().Decide(ctx, a)
}

// Counters are what a Counting governor has admitted so far, handed to
// each decision so a policy can bound a whole session (a request budget, a
// byte budget), and a tally of every decision by verdict.
type Counters struct {
	Effects  uint64 // admitted effects other than requests
	Requests uint64 // admitted requests
	Bytes    uint64 // body bytes of the admitted effects
	// Verdicts counts every decision by its verdict (an error as
	// VerdictError).
	Verdicts map[Verdict]uint64
}

// CountingFunc decides with the counters as they stood before this action.
type CountingFunc func(ctx context.Context, a *Action, c Counters) (Decision, error)

// Counting is a Governor that keeps session Counters and passes them to its
// policy. It counts what its policy admitted (Allow or Modify), not what
// ran: an admitted effect that then failed to publish still counts. In
// memory only; one Counting per session.
type Counting struct {
	policy CountingFunc
	mu     sync.Mutex
	c      Counters
}

// NewCounting returns a counting governor deciding by policy.
func NewCounting(policy CountingFunc) (*Counting, error) {
	if policy == nil {
		return nil, errors.New("govern: counting governor without a policy")
	}
	return &Counting{policy: policy, c: Counters{Verdicts: map[Verdict]uint64{}}}, nil
}

// Counters returns a copy of the counters.
func (g *Counting) Counters() Counters {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.snapshot()
}

func (g *Counting) snapshot() Counters {
	c := g.c
	c.Verdicts = make(map[Verdict]uint64, len(g.c.Verdicts))
	for v, n := range g.c.Verdicts {
		c.Verdicts[v] = n
	}
	return c
}

// Decide runs the policy with the counters so far and counts its decision.
// Decisions are serialised so that a budget is never overrun by two effects
// deciding at once.
func (g *Counting) Decide(ctx context.Context, a *Action) (Decision, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	d, err := g.policy(ctx, a, g.snapshot())
	if err != nil {
		g.c.Verdicts[VerdictError]++
		return d, err
	}
	g.c.Verdicts[d.Verdict]++
	if affirmative(d.Verdict) {
		if a.Kind == effect.Request {
			g.c.Requests++
		} else {
			g.c.Effects++
		}
		body := a.Body
		if d.Verdict == VerdictModify && d.Body != nil {
			body = d.Body
		}
		g.c.Bytes += uint64(len(body))
	}
	return d, nil
}
