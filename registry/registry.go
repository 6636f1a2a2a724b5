// Package registry holds the agent card registry and the router that picks
// agents by capability from it.
//
// Agents advertise what they can do by publishing a capability card (a
// status/card envelope) on agent.registry. A Registry folds that topic into
// the latest card per agent, evicts cards past their ttl, and keeps the set
// of quarantined agents from quarantine/unquarantine facts, the newest per
// agent winning. Under a verifier a card folds only when signed by its
// agent's principal, and a fact only when operator-signed, ordered by its
// signed issued-at, so a replay cannot undo a newer fact however old it is.
// The fold is a stream: what it holds is bounded by MaxCards and MaxFacts,
// not by the topic's length. A Route then
// resolves to agents: one by name, every listener, the one capable agent a
// Policy picks, or all capable agents, skipping unavailable and quarantined
// ones.
package registry

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// The spec's bounds on the fold.
const (
	// DefaultMaxCards is the most cards kept; past it the oldest observed is evicted.
	DefaultMaxCards = 4096
	// DefaultMaxFacts is how many applied quarantine-fact record ids are kept to drop replays.
	DefaultMaxFacts = 16384
	// DefaultFactRetention is how long an applied fact id is kept to drop replays.
	DefaultFactRetention = 24 * time.Hour
)

// Config configure a Registry. The zero value is usable.
type Config struct {
	// Topic is the registry topic. Default agent.registry.
	Topic string
	// Verifier, when set, makes a card fold only when it is signed by the
	// principal of its source agent, and a quarantine fact only when it is
	// signed by an operator key valid at the record's time and carries a
	// signed issued-at (sign.MetaIssuedAt), which orders the facts of an
	// agent. Without it the topic's ACLs are the gate, and facts are ordered
	// by issued-at when present, broker time otherwise.
	Verifier runtime.Verifier
	// Clock decides card freshness. Default the system clock.
	Clock clock.Clock
	// MaxCards bounds the cards kept. Default DefaultMaxCards.
	MaxCards int
	// MaxFacts bounds the applied fact ids kept, and the agents whose
	// latest fact is kept (released agents are forgotten first). Default
	// DefaultMaxFacts.
	MaxFacts int
	// FactRetention bounds how long a fact id is kept. Default DefaultFactRetention.
	FactRetention time.Duration
	// Partitions is the partition count the topic is created with when
	// missing. Default 1.
	Partitions uint32
}

// Entry is the latest card of one agent.
type Entry struct {
	Agent string
	Card  *wire.AgentCard
	// ObservedAt is the broker time of the card's record.
	ObservedAt time.Time
	// order ranks the agent's cards: the newest wins.
	order foldOrder
}

// foldOrder ranks records of one agent: by signed issued-at when there is
// one (broker time otherwise), then broker time, then log position, so the
// fold does not depend on the order it reads partitions in.
type foldOrder struct {
	issued, broker uint64
	partition      uint32
	offset         uint64
}

func (a foldOrder) after(b foldOrder) bool {
	switch {
	case a.issued != b.issued:
		return a.issued > b.issued
	case a.broker != b.broker:
		return a.broker > b.broker
	case a.partition != b.partition:
		return a.partition > b.partition
	}
	return a.offset > b.offset
}

// orderOf is m's rank; issued is false when it carries no issued-at.
func orderOf(m *runtime.Message) (o foldOrder, issued bool) {
	o = foldOrder{issued: m.Timestamp, broker: m.Timestamp, partition: m.Position.Partition, offset: m.Position.Offset}
	if iat, ok := sign.IssuedAt(m.Envelope); ok {
		o.issued = iat
		issued = true
	}
	return o, issued
}

// factState is the newest fact folded for one agent.
type factState struct {
	order       foldOrder
	quarantined bool
}

// Fresh reports whether the card is within its ttl at now; a card without a
// ttl never goes stale.
func (e *Entry) Fresh(now time.Time) bool {
	if e.Card.TTLMicros == nil {
		return true
	}
	return !e.ObservedAt.Add(time.Duration(*e.Card.TTLMicros) * time.Microsecond).Before(now)
}

// Capability returns the card's descriptor for skill, or nil.
func (e *Entry) Capability(skill string) *wire.CapabilityDescriptor {
	for i := range e.Card.Capabilities {
		if e.Card.Capabilities[i].SkillID == skill {
			return &e.Card.Capabilities[i]
		}
	}
	return nil
}

// Registry is the folded state of the registry topic. Refresh reads what
// was appended since the last refresh; the other methods read the fold. It
// is safe for concurrent use.
type Registry struct {
	t    runtime.Transport
	opts Config

	refreshMu  sync.Mutex // one fold at a time
	mu         sync.Mutex
	next       map[uint32]uint64
	cards      map[string]*Entry
	quarantine map[string]factState
	facts      map[string]time.Time // applied fact record id → record time
	factOrder  []string
}

// New returns an empty registry over t; call Refresh to fold the topic.
func New(t runtime.Transport, opts Config) *Registry {
	if opts.Topic == "" {
		opts.Topic = runtime.TopicRegistry
	}
	if opts.Clock == nil {
		opts.Clock = clock.System{}
	}
	if opts.MaxCards <= 0 {
		opts.MaxCards = DefaultMaxCards
	}
	if opts.MaxFacts <= 0 {
		opts.MaxFacts = DefaultMaxFacts
	}
	if opts.FactRetention <= 0 {
		opts.FactRetention = DefaultFactRetention
	}
	if opts.Partitions == 0 {
		opts.Partitions = 1
	}
	return &Registry{
		t: t, opts: opts,
		next:       map[uint32]uint64{},
		cards:      map[string]*Entry{},
		quarantine: map[string]factState{},
		facts:      map[string]time.Time{},
	}
}

// Topic returns the registry topic.
func (r *Registry) Topic() string { return r.opts.Topic }

// Refresh folds the records appended since the previous refresh, then
// evicts cards past their ttl. Records are folded as they are read, each
// agent's newest card and fact winning (see Config.Verifier for what
// newest means), so a refresh holds one read batch and the bounded fold,
// however many records the topic has.
func (r *Registry) Refresh(ctx context.Context) error {
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	if err := r.t.EnsureTopics(ctx, r.opts.Partitions, r.opts.Topic); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	next, err := logscan.Topic(ctx, r.t, r.opts.Topic, r.next, func(rec *runtime.Incoming) {
		m, err := runtime.DecodeRecord(r.opts.Topic, rec, 0)
		if err != nil || m.Envelope == nil {
			return
		}
		r.mu.Lock()
		r.apply(m)
		r.mu.Unlock()
	})
	if err != nil {
		// What was folded stays: folding a record twice changes nothing.
		return fmt.Errorf("registry: %w", err)
	}
	r.next = next
	r.mu.Lock()
	defer r.mu.Unlock()
	r.boundCards(r.opts.MaxCards)
	now := r.opts.Clock.Now()
	for id, e := range r.cards {
		if !e.Fresh(now) {
			delete(r.cards, id)
		}
	}
	r.expireFacts(now)
	return nil
}

// apply folds one record; the caller holds r.mu.
func (r *Registry) apply(m *runtime.Message) {
	env := m.Envelope
	if env.Kind != wire.KindStatus || env.Operation == nil {
		return
	}
	at := time.UnixMicro(int64(m.Timestamp))
	order, issued := orderOf(m)
	switch *env.Operation {
	case wire.OperationCard:
		if r.opts.Verifier != nil {
			// The source binding makes the card its signer's own: a peer
			// cannot mark another agent unavailable or fill the cap.
			if _, err := m.Verify(r.opts.Verifier); err != nil {
				return
			}
		}
		agent := string(env.Source)
		if old, ok := r.cards[agent]; ok && !order.after(old.order) {
			return
		}
		card, err := wire.DecodeAgentCard(env.Body)
		if err != nil || card.Validate() != nil {
			return
		}
		r.cards[agent] = &Entry{Agent: agent, Card: card, ObservedAt: at, order: order}
		// Shedding in bulk keeps a flood of cards linear; Refresh trims
		// to MaxCards at its end.
		if len(r.cards) >= 2*r.opts.MaxCards {
			r.boundCards(r.opts.MaxCards)
		}
	case wire.OperationQuarantine, wire.OperationUnquarantine:
		if r.opts.Verifier != nil {
			v, err := m.Verify(r.opts.Verifier)
			if err != nil || v.Kind != sign.KindOperator || !issued {
				return
			}
		}
		if env.Record != nil {
			id := env.Record.String()
			if _, seen := r.facts[id]; seen {
				return // a verbatim replay of an applied fact
			}
			r.facts[id] = at
			r.factOrder = append(r.factOrder, id)
			for len(r.factOrder) > r.opts.MaxFacts {
				delete(r.facts, r.factOrder[0])
				r.factOrder = r.factOrder[1:]
			}
		}
		agent := string(env.Body)
		quarantine := *env.Operation == wire.OperationQuarantine
		if old, ok := r.quarantine[agent]; ok && !factSupersedes(order, quarantine, old) {
			return // an older fact, or a replay of one: the newer stands
		}
		r.quarantine[agent] = factState{order: order, quarantined: quarantine}
		if len(r.quarantine) > 2*r.opts.MaxFacts {
			r.boundFacts()
		}
	}
}

// factSupersedes reports whether a fact of rank o (a quarantine when
// quarantine is set) replaces old: a later issued-at wins; at an equal one
// a quarantine beats a release, whatever the broker order (a replay is
// appended later, so broker time must not break that tie).
func factSupersedes(o foldOrder, quarantine bool, old factState) bool {
	if o.issued != old.order.issued {
		return o.issued > old.order.issued
	}
	if quarantine != old.quarantined {
		return quarantine
	}
	return o.after(old.order)
}

// boundCards evicts the oldest cards until at most limit are left.
func (r *Registry) boundCards(limit int) {
	if len(r.cards) <= limit {
		return
	}
	all := make([]*Entry, 0, len(r.cards))
	for _, e := range r.cards {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool { return all[j].order.after(all[i].order) })
	for _, e := range all[:len(all)-limit] {
		delete(r.cards, e.Agent)
	}
}

// boundFacts forgets the oldest released agents, then if need be the
// oldest quarantined ones, until MaxFacts are left: forgetting a release
// can only let an older quarantine apply again, the safe way to fail.
func (r *Registry) boundFacts() {
	type kept struct {
		agent string
		factState
	}
	all := make([]kept, 0, len(r.quarantine))
	for a, f := range r.quarantine {
		all = append(all, kept{a, f})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].quarantined != all[j].quarantined {
			return !all[i].quarantined
		}
		return all[j].order.after(all[i].order)
	})
	for _, k := range all[:len(all)-r.opts.MaxFacts] {
		delete(r.quarantine, k.agent)
	}
}

func (r *Registry) expireFacts(now time.Time) {
	for len(r.factOrder) > 0 {
		id := r.factOrder[0]
		if now.Sub(r.facts[id]) <= r.opts.FactRetention {
			return
		}
		delete(r.facts, id)
		r.factOrder = r.factOrder[1:]
	}
}

// Cards returns the folded cards sorted by agent id.
func (r *Registry) Cards() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Entry, 0, len(r.cards))
	for _, e := range r.cards {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out
}

// Card returns agent's latest card.
func (r *Registry) Card(agent string) (Entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.cards[agent]
	if !ok {
		return Entry{}, false
	}
	return *e, true
}

// Quarantined reports whether agent is in the quarantine set.
func (r *Registry) Quarantined(agent string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.quarantine[agent].quarantined
}

// Candidates returns the agents that can serve skill now, sorted by agent
// id: a fresh card advertising the skill with a health other than
// unavailable, and not quarantined.
func (r *Registry) Candidates(skill string) []Entry {
	now := r.opts.Clock.Now()
	var out []Entry
	for _, e := range r.Cards() {
		c := e.Capability(skill)
		if c == nil || !e.Fresh(now) || r.Quarantined(e.Agent) {
			continue
		}
		if c.Health != nil && *c.Health == wire.HealthUnavailable {
			continue
		}
		out = append(out, e)
	}
	return out
}

// ErrNoCapableAgent reports a capability route that matched no agent; its
// runtime code is CodeNoCapableAgent, so a handler returning it is retried.
var ErrNoCapableAgent error = &runtime.Error{Code: runtime.CodeNoCapableAgent, Msg: "registry: no capable agent"}

// PublishCard publishes agent's card on topic (default agent.registry) as
// a status/card envelope, creating the topic when missing. key, when set,
// signs it. Agents can publish their own as they start (see
// runtime.AgentConfig.CardTopic).
func PublishCard(ctx context.Context, c *runtime.Client, topic, agent string, card *wire.AgentCard, key *sign.Key) error {
	if err := card.Validate(); err != nil {
		return fmt.Errorf("registry: card of %s: %w", agent, &runtime.Error{Code: runtime.CodeInvalid, Msg: err.Error(), Err: err})
	}
	body, err := card.Marshal()
	if err != nil {
		return fmt.Errorf("registry: encode card of %s: %w", agent, err)
	}
	return publishStatus(ctx, c, topic, agent, wire.OperationCard, body, key)
}

// Quarantine publishes a fact putting agent in the quarantine set, from
// operator (an agent id); key signs it, which a registry with a verifier
// requires (an operator key).
func Quarantine(ctx context.Context, c *runtime.Client, topic, operator, agent string, key *sign.Key) error {
	return publishFact(ctx, c, topic, operator, wire.OperationQuarantine, agent, key)
}

// Unquarantine publishes a fact taking agent out of the quarantine set.
func Unquarantine(ctx context.Context, c *runtime.Client, topic, operator, agent string, key *sign.Key) error {
	return publishFact(ctx, c, topic, operator, wire.OperationUnquarantine, agent, key)
}

func publishFact(ctx context.Context, c *runtime.Client, topic, operator, op, agent string, key *sign.Key) error {
	return publishStatus(ctx, c, topic, operator, op, []byte(agent), key)
}

// publishStatus publishes a status envelope with operation op from source
// on topic (default agent.registry), creating the topic when missing.
func publishStatus(ctx context.Context, c *runtime.Client, topic, source, op string, body []byte, key *sign.Key) error {
	msg := runtime.Out{Kind: wire.KindStatus, Topic: cmp.Or(topic, runtime.TopicRegistry), From: source, Body: body}
	if err := c.Transport().EnsureTopics(ctx, 1, msg.Topic); err != nil {
		return fmt.Errorf("registry: publish %s: %w", op, err)
	}
	if _, err := c.Send(ctx, msg, runtime.WithOperation(op), runtime.WithSigningKey(key)); err != nil {
		return fmt.Errorf("registry: publish %s: %w", op, err)
	}
	return nil
}
