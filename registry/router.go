package registry

import (
	"errors"
	"fmt"

	"github.com/lasergo/laser/wire"
)

// Scorer rates a candidate for a skill in a Custom policy; the highest
// score wins, ties go to the lowest agent id.
type Scorer func(e *Entry, c *wire.CapabilityDescriptor) float64

// Policy picks the one agent a ToCapable route goes to.
type Policy struct {
	kind   policyKind
	sticky string
	scorer Scorer
}

type policyKind uint8

const (
	policyAny policyKind = iota
	policyCheapest
	policyFastest
	policyLeastLoaded
	policySticky
	policyCustom
)

// The policies. A candidate that does not advertise the class a policy
// compares sorts last; ties go to the lowest agent id.
var (
	// Any picks the first candidate (the lowest agent id); the zero Policy.
	Any = Policy{kind: policyAny}
	// Cheapest picks the lowest cost class.
	Cheapest = Policy{kind: policyCheapest}
	// Fastest picks the lowest latency class.
	Fastest = Policy{kind: policyFastest}
	// LeastLoaded picks the lowest load.
	LeastLoaded = Policy{kind: policyLeastLoaded}
)

// Sticky picks agent while it is a candidate, else falls back to Any.
func Sticky(agent string) Policy { return Policy{kind: policySticky, sticky: agent} }

// Custom picks the candidate scorer rates highest.
func Custom(scorer Scorer) Policy { return Policy{kind: policyCustom, scorer: scorer} }

// pick returns the chosen candidate; cands is non-empty and sorted by agent.
func (p Policy) pick(skill string, cands []Entry) Entry {
	best := 0
	key := func(i int) (float64, bool) {
		c := cands[i].Capability(skill)
		switch p.kind {
		case policyCheapest:
			if c.CostClass != nil {
				return -float64(*c.CostClass), true
			}
		case policyFastest:
			if c.LatencyClass != nil {
				return -float64(*c.LatencyClass), true
			}
		case policyLeastLoaded:
			if c.Load != nil {
				return -float64(*c.Load), true
			}
		case policyCustom:
			return p.scorer(&cands[i], c), true
		}
		return 0, false
	}
	switch p.kind {
	case policyAny:
		return cands[0]
	case policySticky:
		for _, e := range cands {
			if e.Agent == p.sticky {
				return e
			}
		}
		return cands[0]
	}
	bestScore, bestOK := key(0)
	for i := 1; i < len(cands); i++ {
		s, ok := key(i)
		if ok && (!bestOK || s > bestScore) {
			best, bestScore, bestOK = i, s, true
		}
	}
	return cands[best]
}

// Route says where a message goes.
type Route struct {
	kind   routeKind
	agent  string
	skill  string
	policy Policy
}

type routeKind uint8

const (
	routeTo routeKind = iota + 1
	routeBroadcast
	routeToCapable
	routeAllCapable
)

// To routes to one named agent.
func To(agent string) Route { return Route{kind: routeTo, agent: agent} }

// Broadcast routes to every listener (no target).
func Broadcast() Route { return Route{kind: routeBroadcast} }

// ToCapable routes to the one capable agent policy picks.
func ToCapable(skill string, policy Policy) Route {
	return Route{kind: routeToCapable, skill: skill, policy: policy}
}

// AllCapable routes to every capable agent.
func AllCapable(skill string) Route { return Route{kind: routeAllCapable, skill: skill} }

// IsBroadcast reports whether the route has no target.
func (r Route) IsBroadcast() bool { return r.kind == routeBroadcast }

// IsAll reports whether the route goes to every capable agent.
func (r Route) IsAll() bool { return r.kind == routeAllCapable }

// NeedsRegistry reports whether resolving r reads agent cards (a route by
// capability); a route To a named agent resolves without them.
func (r Route) NeedsRegistry() bool { return r.kind == routeToCapable || r.kind == routeAllCapable }

// Validate reports a route that can never resolve: the zero Route, To an
// invalid agent id, or a capability route without a skill.
func (r Route) Validate() error {
	switch r.kind {
	case routeTo:
		if _, err := wire.ParseAgentID(r.agent); err != nil {
			return fmt.Errorf("registry: route to %q: %w", r.agent, err)
		}
	case routeBroadcast:
	case routeToCapable, routeAllCapable:
		if r.skill == "" {
			return fmt.Errorf("registry: %s: no skill", r)
		}
	default:
		return errZeroRoute
	}
	return nil
}

var errZeroRoute = errors.New("registry: the zero Route routes nowhere")

// String names the route for errors and logs.
func (r Route) String() string {
	switch r.kind {
	case routeTo:
		return "to " + r.agent
	case routeBroadcast:
		return "broadcast"
	case routeToCapable:
		return "to one capable of " + r.skill
	case routeAllCapable:
		return "to all capable of " + r.skill
	}
	return "no route"
}

// Resolve returns the agents the route targets from the registry's fold:
// To gives the agent, Broadcast none (the message carries no target),
// ToCapable the policy's pick and AllCapable every candidate (see
// Registry.Candidates). A capability route with no candidate fails with
// ErrNoCapableAgent. Call Refresh first to see the latest cards.
func (r *Registry) Resolve(route Route) ([]string, error) {
	switch route.kind {
	case routeTo:
		return []string{route.agent}, nil
	case routeBroadcast:
		return nil, nil
	case routeToCapable, routeAllCapable:
		cands := r.Candidates(route.skill)
		if len(cands) == 0 {
			return nil, fmt.Errorf("%w for skill %q", ErrNoCapableAgent, route.skill)
		}
		if route.kind == routeToCapable {
			return []string{route.policy.pick(route.skill, cands).Agent}, nil
		}
		out := make([]string, len(cands))
		for i, e := range cands {
			out[i] = e.Agent
		}
		return out, nil
	}
	return nil, errZeroRoute
}
