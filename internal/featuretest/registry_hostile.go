package featuretest

import (
	"time"

	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// The scenarios below are the hostile peer: it can append to the
// registry topic, holding no key or one peer agent's key.

// registryForeignCards: under a verifier a card folds only when signed by
// its own agent's principal. The peer can neither mark the real reviewer
// unavailable nor add a zero-cost fake one.
func registryForeignCards(w *World) {
	reviewerKey, malloryKey := SeededKey(3), SeededKey(4)
	keys := sign.NewRegistry()
	if err := keys.Enroll("reviewer", reviewerKey.Public()); err != nil {
		w.T.Fatal(err)
	}
	if err := keys.Enroll("mallory", malloryKey.Public()); err != nil {
		w.T.Fatal(err)
	}
	card := func(agent string, health wire.Health, cost uint8) *wire.AgentCard {
		return &wire.AgentCard{Name: agent, Version: "1", Capabilities: []wire.CapabilityDescriptor{{SkillID: "review", Health: &health, CostClass: &cost}}}
	}
	publish := func(agent string, c *wire.AgentCard, key *sign.Key) {
		w.T.Helper()
		if err := registry.PublishCard(w.Ctx, w.Client, w.Topic, agent, c, key); err != nil {
			w.T.Fatal(err)
		}
	}
	publish("reviewer", card("reviewer", wire.HealthHealthy, 5), reviewerKey)
	publish("reviewer", card("reviewer", wire.HealthUnavailable, 5), malloryKey) // signed by a peer
	publish("fake-reviewer", card("fake-reviewer", wire.HealthHealthy, 0), nil)  // unsigned
	publish("fake-signed", card("fake-signed", wire.HealthHealthy, 0), malloryKey)
	r := w.Registry(registry.Config{Verifier: keys})
	w.Refresh(r)
	if got := agents(r.Candidates("review")); len(got) != 1 || got[0] != "reviewer" {
		w.T.Fatalf("under a verifier the review candidates are %v, want only the real reviewer", got)
	}
}

// registryFactReplayAfterRetention: an operator releases an agent, then
// quarantines it; the release replayed after its fact id was forgotten
// (past MaxFacts, or the 24 h retention) must not undo the newer
// quarantine, because facts are ordered by their signed issued-at.
func registryFactReplayAfterRetention(w *World) {
	operator := SeededKey(5)
	keys := sign.NewRegistry()
	if err := keys.EnrollOperator("ops", operator.Public()); err != nil {
		w.T.Fatal(err)
	}
	clock := lasertest.NewManualClock(time.Now())
	client := runtime.NewClient(w.Tr, runtime.ClientConfig{Clock: clock})
	w.T.Cleanup(func() { _ = client.Close() })
	if err := registry.Unquarantine(w.Ctx, client, w.Topic, "ops", "a", operator); err != nil {
		w.T.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := registry.Quarantine(w.Ctx, client, w.Topic, "ops", "a", operator); err != nil {
		w.T.Fatal(err)
	}
	r := w.Registry(registry.Config{Verifier: keys, MaxFacts: 1})
	w.Refresh(r)
	if !r.Quarantined("a") {
		w.T.Fatal("the operator's quarantine did not fold")
	}
	w.replay(wire.OperationUnquarantine)
	w.Refresh(r)
	if !r.Quarantined("a") {
		w.T.Fatal("a replayed older release undid the newer quarantine")
	}
	// A fresh registry folding the whole topic agrees.
	r2 := w.Registry(registry.Config{Verifier: keys})
	w.Refresh(r2)
	if !r2.Quarantined("a") {
		w.T.Fatal("a fresh fold let the replayed release win")
	}
}
