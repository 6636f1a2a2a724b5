package featuretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Scenario is one named rule of a suite, run on a world of type W.
type Scenario[W any] struct {
	Name string
	Fn   func(W)
}

// RunScenarios runs each scenario as a subtest on a fresh transport from
// newTransport, with the world newWorld builds around the base World.
func RunScenarios[W any](t *testing.T, newTransport func(t *testing.T) runtime.Transport, newWorld func(*World) W, scenarios []Scenario[W]) {
	t.Helper()
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) { sc.Fn(newWorld(NewWorld(t, newTransport(t)))) })
	}
}

// baseWorld returns w itself: the registry suite's world is the base one.
func baseWorld(w *World) *World { return w }

// World is one scenario's transport, client and registry topic; every
// feature's world is built around it.
type World struct {
	T      *testing.T
	Tr     runtime.Transport
	Client *runtime.Client
	Ctx    context.Context
	Topic  string
}

// NewWorld returns a world with a fresh registry topic name; its context
// ends with the test.
func NewWorld(t *testing.T, tr runtime.Transport) *World {
	client := runtime.NewClient(tr, runtime.ClientConfig{})
	t.Cleanup(func() { _ = client.Close() })
	return &World{T: t, Tr: tr, Client: client, Ctx: t.Context(), Topic: Name("registry")}
}

// Name returns what with a random suffix, so scenarios on a shared real
// server never see each other's records.
func Name(what string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return what + "-" + hex.EncodeToString(b[:])
}

// Registry returns a registry over the world's topic.
func (w *World) Registry(opts registry.Config) *registry.Registry {
	opts.Topic = w.Topic
	return registry.New(w.Tr, opts)
}

// Publish publishes agent's card with one capability per skill.
func (w *World) Publish(agent string, caps ...wire.CapabilityDescriptor) {
	w.T.Helper()
	w.PublishCard(agent, &wire.AgentCard{Name: agent, Version: "1", Capabilities: caps})
}

// PublishCard publishes a card.
func (w *World) PublishCard(agent string, card *wire.AgentCard) {
	w.T.Helper()
	if err := registry.PublishCard(w.Ctx, w.Client, w.Topic, agent, card, nil); err != nil {
		w.T.Fatal(err)
	}
}

// Refresh refreshes r, failing the test on error.
func (w *World) Refresh(r *registry.Registry) {
	w.T.Helper()
	if err := r.Refresh(w.Ctx); err != nil {
		w.T.Fatal(err)
	}
}

// Skill returns a healthy capability descriptor.
func Skill(id string) wire.CapabilityDescriptor {
	h := wire.HealthHealthy
	return wire.CapabilityDescriptor{SkillID: id, Health: &h}
}

// SeededKey returns a deterministic test key whose seed starts with b.
func SeededKey(b byte) *sign.Key {
	var seed [32]byte
	seed[0] = b
	return sign.NewKey(seed)
}
