package featuretest

import (
	"cmp"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Registry runs the rules of the agent card registry and of routing by
// capability (package registry), each scenario on a fresh transport from
// newTransport and with a registry topic of its own.
func Registry(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	RunScenarios(t, newTransport, baseWorld, []Scenario[*World]{
		{"FoldsTheLatestCardPerAgent", registryLatestCard},
		{"RefreshResumesWhereTheLastOneEnded", registryIncremental},
		{"EvictsCardsPastTheirTTL", registryTTL},
		{"KeepsAtMostMaxCardsEvictingTheOldest", registryBound},
		{"QuarantineAndUnquarantineToggleTheSet", registryQuarantine},
		{"ReplayedQuarantineFactIsDropped", registryReplay},
		{"FactIDsAreKeptWithinCountAndRetention", registryFactBounds},
		{"UnderAVerifierOnlyOperatorSignedFactsFold", registryOperatorSigned},
		{"UnderAVerifierOnlyCardsSignedByTheirAgentFold", registryForeignCards},
		{"UnderAVerifierAReplayedOlderFactCannotUndoANewerOne", registryFactReplayAfterRetention},
		{"RoutesAroundUnavailableAndQuarantinedAgents", registryRouteAround},
		{"PoliciesPickCheapestFastestLeastLoadedStickyCustomAny", registryPolicies},
		{"NoCandidateIsADistinctError", registryNoCandidate},
		{"ToAndBroadcastNeedNoCard", registryDirect},
		{"AgentPublishesItsCardOnStart", registryCardOnStart},
	})
}

func agents(es []registry.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Agent
	}
	return out
}

func (w *World) resolve(r *registry.Registry, route registry.Route) []string {
	w.T.Helper()
	got, err := r.Resolve(route)
	if err != nil {
		w.T.Fatalf("resolve %s: %v", route, err)
	}
	return got
}

func registryLatestCard(w *World) {
	w.PublishCard("reviewer-a", &wire.AgentCard{Version: "1", Capabilities: []wire.CapabilityDescriptor{Skill("review")}})
	w.PublishCard("reviewer-b", &wire.AgentCard{Version: "1", Capabilities: []wire.CapabilityDescriptor{Skill("review")}})
	w.PublishCard("reviewer-a", &wire.AgentCard{Version: "2", Capabilities: []wire.CapabilityDescriptor{Skill("edit")}})
	r := w.Registry(registry.Config{})
	w.Refresh(r)
	if got := agents(r.Cards()); !slices.Equal(got, []string{"reviewer-a", "reviewer-b"}) {
		w.T.Fatalf("cards of %v, want reviewer-a and reviewer-b", got)
	}
	e, _ := r.Card("reviewer-a")
	if e.Card.Version != "2" {
		w.T.Fatalf("reviewer-a's card is version %q, want the latest, 2", e.Card.Version)
	}
	if got := agents(r.Candidates("review")); !slices.Equal(got, []string{"reviewer-b"}) {
		w.T.Fatalf("review candidates %v, want only reviewer-b (reviewer-a's latest card dropped the skill)", got)
	}
}

func registryIncremental(w *World) {
	r := w.Registry(registry.Config{})
	w.Publish("one", Skill("s"))
	w.Refresh(r)
	w.Publish("two", Skill("s"))
	w.Refresh(r)
	if got := agents(r.Cards()); !slices.Equal(got, []string{"one", "two"}) {
		w.T.Fatalf("after two refreshes the cards are %v, want one and two", got)
	}
	w.Refresh(r)
	if n := len(r.Cards()); n != 2 {
		w.T.Fatalf("a refresh with nothing new changed the fold to %d cards", n)
	}
}

func registryTTL(w *World) {
	clock := lasertest.NewManualClock(time.Now())
	r := w.Registry(registry.Config{Clock: clock})
	ttl := uint64(time.Minute / time.Microsecond)
	w.PublishCard("short", &wire.AgentCard{Capabilities: []wire.CapabilityDescriptor{Skill("s")}, TTLMicros: &ttl})
	w.Publish("forever", Skill("s"))
	w.Refresh(r)
	if got := agents(r.Candidates("s")); !slices.Equal(got, []string{"forever", "short"}) {
		w.T.Fatalf("fresh candidates %v, want forever and short", got)
	}
	clock.Advance(2 * time.Minute)
	if got := agents(r.Candidates("s")); !slices.Equal(got, []string{"forever"}) {
		w.T.Fatalf("past the ttl the candidates are %v, want only forever", got)
	}
	w.Refresh(r)
	if _, ok := r.Card("short"); ok {
		w.T.Fatal("a refresh kept a card past its ttl")
	}
}

func registryBound(w *World) {
	r := w.Registry(registry.Config{MaxCards: 2})
	w.Publish("a", Skill("s"))
	w.Publish("b", Skill("s"))
	w.Publish("c", Skill("s"))
	w.Refresh(r)
	if got := agents(r.Cards()); !slices.Equal(got, []string{"b", "c"}) {
		w.T.Fatalf("with MaxCards 2 the cards are %v, want b and c (a, the oldest, evicted)", got)
	}
}

func (w *World) quarantine(op, agent string, key *sign.Key) {
	w.T.Helper()
	if err := registry.Quarantine(w.Ctx, w.Client, w.Topic, op, agent, key); err != nil {
		w.T.Fatal(err)
	}
}

func (w *World) unquarantine(op, agent string, key *sign.Key) {
	w.T.Helper()
	if err := registry.Unquarantine(w.Ctx, w.Client, w.Topic, op, agent, key); err != nil {
		w.T.Fatal(err)
	}
}

func registryQuarantine(w *World) {
	r := w.Registry(registry.Config{})
	w.Publish("a", Skill("s"))
	w.quarantine("ops", "a", nil)
	w.Refresh(r)
	if !r.Quarantined("a") {
		w.T.Fatal("a quarantine fact did not quarantine the agent")
	}
	w.unquarantine("ops", "a", nil)
	w.Refresh(r)
	if r.Quarantined("a") {
		w.T.Fatal("an unquarantine fact did not release the agent")
	}
}

func registryReplay(w *World) {
	r := w.Registry(registry.Config{})
	w.quarantine("ops", "a", nil)
	w.unquarantine("ops", "a", nil)
	w.Refresh(r)
	w.replay(wire.OperationQuarantine)
	w.Refresh(r)
	if r.Quarantined("a") {
		w.T.Fatal("a verbatim replay of an applied quarantine fact quarantined the agent again")
	}
}

// replay republishes the first fact with operation op byte for byte, as
// anyone able to write the topic could.
func (w *World) replay(op string) {
	w.T.Helper()
	parts, err := w.Tr.Partitions(w.Ctx, w.Topic)
	if err != nil {
		w.T.Fatal(err)
	}
	for p := uint32(0); p < parts; p++ {
		recs, err := w.Tr.ReadRange(w.Ctx, w.Topic, p, 0, 10)
		if err != nil {
			w.T.Fatal(err)
		}
		for i := range recs {
			if m, err := runtime.DecodeRecord(w.Topic, &recs[i], 0); err == nil && m.Operation() == op {
				if _, err := w.Tr.Publish(w.Ctx, w.Topic, runtime.Outgoing{Headers: recs[i].Headers.Decode(), Payload: recs[i].Payload}); err != nil {
					w.T.Fatal(err)
				}
				return
			}
		}
	}
	w.T.Fatalf("no %s fact on the topic", op)
}

func registryFactBounds(w *World) {
	// Only the newest fact id is kept, so replaying an older one applies.
	r := w.Registry(registry.Config{MaxFacts: 1})
	w.quarantine("ops", "a", nil)
	w.unquarantine("ops", "a", nil)
	w.Refresh(r)
	w.replay(wire.OperationQuarantine)
	w.Refresh(r)
	if !r.Quarantined("a") {
		w.T.Fatal("with MaxFacts 1 the evicted fact id still dropped its replay")
	}
	// Fact ids older than the retention are forgotten at a refresh.
	clock := lasertest.NewManualClock(time.Now())
	r2 := w.Registry(registry.Config{Clock: clock})
	w.Refresh(r2)
	clock.Advance(registry.DefaultFactRetention + time.Hour)
	w.Refresh(r2)
	w.unquarantine("ops", "a", nil)
	w.replay(wire.OperationUnquarantine)
	w.Refresh(r2)
	if r2.Quarantined("a") {
		w.T.Fatal("the last fact should leave a released")
	}
	w.replay(wire.OperationQuarantine)
	w.Refresh(r2)
	if !r2.Quarantined("a") {
		w.T.Fatal("a fact id past the 24 h retention still dropped its replay")
	}
}

func registryOperatorSigned(w *World) {
	operator, agentKey := SeededKey(1), SeededKey(2)
	keys := sign.NewRegistry()
	if err := keys.EnrollOperator("ops", operator.Public()); err != nil {
		w.T.Fatal(err)
	}
	if err := keys.Enroll("mallory", agentKey.Public()); err != nil {
		w.T.Fatal(err)
	}
	r := w.Registry(registry.Config{Verifier: keys})
	w.quarantine("ops", "unsigned", nil)
	w.quarantine("mallory", "agent-signed", agentKey)
	w.quarantine("ops", "operator-signed", operator)
	w.Refresh(r)
	if r.Quarantined("unsigned") || r.Quarantined("agent-signed") {
		w.T.Fatal("under a verifier an unsigned or agent-signed quarantine fact folded")
	}
	if !r.Quarantined("operator-signed") {
		w.T.Fatal("under a verifier an operator-signed quarantine fact did not fold")
	}
}

func registryRouteAround(w *World) {
	down := wire.HealthUnavailable
	w.Publish("healthy", Skill("review"))
	w.Publish("down", wire.CapabilityDescriptor{SkillID: "review", Health: &down})
	w.Publish("bad", Skill("review"))
	w.quarantine("ops", "bad", nil)
	r := w.Registry(registry.Config{})
	w.Refresh(r)
	if got := w.resolve(r, registry.AllCapable("review")); !slices.Equal(got, []string{"healthy"}) {
		w.T.Fatalf("all capable of review resolved to %v, want only healthy", got)
	}
	if got := w.resolve(r, registry.ToCapable("review", registry.Sticky("bad"))); !slices.Equal(got, []string{"healthy"}) {
		w.T.Fatalf("sticky to a quarantined agent resolved to %v, want healthy", got)
	}
}

func registryPolicies(w *World) {
	u8 := func(v uint8) *uint8 { return &v }
	u16 := func(v uint16) *uint16 { return &v }
	w.Publish("a-plain", Skill("s"))
	w.Publish("b-cheap", wire.CapabilityDescriptor{SkillID: "s", CostClass: u8(1), LatencyClass: u8(9), Load: u16(900)})
	w.Publish("c-fast", wire.CapabilityDescriptor{SkillID: "s", CostClass: u8(5), LatencyClass: u8(1), Load: u16(500)})
	w.Publish("d-idle", wire.CapabilityDescriptor{SkillID: "s", CostClass: u8(9), LatencyClass: u8(5), Load: u16(10)})
	r := w.Registry(registry.Config{})
	w.Refresh(r)
	byName := func(want string) registry.Scorer {
		return func(e *registry.Entry, _ *wire.CapabilityDescriptor) float64 {
			if e.Agent == want {
				return 1
			}
			return 0
		}
	}
	for _, c := range []struct {
		policy registry.Policy
		want   string
	}{
		{registry.Any, "a-plain"},
		{registry.Cheapest, "b-cheap"},
		{registry.Fastest, "c-fast"},
		{registry.LeastLoaded, "d-idle"},
		{registry.Sticky("c-fast"), "c-fast"},
		{registry.Sticky("gone"), "a-plain"},
		{registry.Custom(byName("d-idle")), "d-idle"},
	} {
		if got := w.resolve(r, registry.ToCapable("s", c.policy)); !slices.Equal(got, []string{c.want}) {
			w.T.Errorf("policy picked %v, want %s", got, c.want)
		}
	}
}

func registryNoCandidate(w *World) {
	w.Publish("a", Skill("other"))
	r := w.Registry(registry.Config{})
	w.Refresh(r)
	for _, route := range []registry.Route{registry.ToCapable("s", registry.Any), registry.AllCapable("s")} {
		if _, err := r.Resolve(route); !errors.Is(err, registry.ErrNoCapableAgent) {
			w.T.Fatalf("%s with no candidate: %v, want ErrNoCapableAgent", route, err)
		}
	}
}

func registryDirect(w *World) {
	r := w.Registry(registry.Config{})
	w.Refresh(r)
	if got := w.resolve(r, registry.To("x")); !slices.Equal(got, []string{"x"}) {
		w.T.Fatalf("To(x) resolved to %v", got)
	}
	if got := w.resolve(r, registry.Broadcast()); len(got) != 0 {
		w.T.Fatalf("broadcast resolved to %v, want no target", got)
	}
}

func registryCardOnStart(w *World) {
	inbox := Name("inbox")
	if err := w.Tr.EnsureTopics(w.Ctx, 1, inbox); err != nil {
		w.T.Fatal(err)
	}
	card := &wire.AgentCard{Name: "starter", Capabilities: []wire.CapabilityDescriptor{Skill("s")}}
	a, err := w.Client.NewAgent(runtime.AgentConfig{ID: "starter", Listen: inbox, Card: card, CardTopic: cmp.Or(w.Topic, runtime.TopicRegistry),
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error { return nil })})
	if err != nil {
		w.T.Fatal(err)
	}
	h := a.Start(w.Ctx)
	if err := h.Ready(w.Ctx); err != nil {
		w.T.Fatal(err)
	}
	defer h.Shutdown(w.Ctx)
	r := w.Registry(registry.Config{})
	w.Refresh(r)
	if got := w.resolve(r, registry.ToCapable("s", registry.Any)); !slices.Equal(got, []string{"starter"}) {
		w.T.Fatalf("after Ready the registry routes s to %v, want the started agent", got)
	}
	if _, err := w.Client.NewAgent(runtime.AgentConfig{ID: "cardless", Listen: inbox, CardTopic: runtime.TopicRegistry,
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error { return nil })}); runtime.CodeOf(err) != runtime.CodeConfig {
		w.T.Fatalf("publishing a missing card: %v, want CodeConfig", err)
	}
}
