// Package examplerig is the setup the packages' examples share: a client on
// a fresh embedded log and a few agents that answer every command with a
// fixed function, some advertising skills on a capability card. It is for
// examples only: setup failures panic.
package examplerig

import (
	"cmp"
	"context"
	"io"
	"log/slog"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Agent is one agent of a rig. It listens on Listen (default
// agent.commands) and answers every command with Answer of its body, or
// runs Handle when set; with Skills it publishes a card advertising them on
// agent.registry as it starts.
type Agent struct {
	ID     string
	Listen string
	Skills []string
	Answer func(body []byte) []byte
	Handle runtime.HandlerFunc
}

// Rig is a client on an embedded log and the agents started on it.
type Rig struct {
	Client  *runtime.Client
	handles []*runtime.AgentHandle
}

// Start bootstraps a client on a fresh embedded log, with one partition per
// topic so that what an example prints comes in a fixed order, and starts
// agents, each ready when Start returns. Logs are discarded, so an example's
// output is only what it prints. It panics when setup fails.
func Start(ctx context.Context, agents ...Agent) *Rig {
	client := runtime.NewClient(embedlog.New("example", embedlog.Config{}), runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := client.Bootstrap(ctx, 1); err != nil {
		panic(err)
	}
	r := &Rig{Client: client}
	for _, a := range agents {
		r.start(ctx, a)
	}
	return r
}

// start runs one agent and waits until it is ready.
func (r *Rig) start(ctx context.Context, a Agent) {
	handle := a.Handle
	if handle == nil {
		handle = func(c *runtime.Ctx) error { return c.Respond(a.Answer(c.Message().Body())) }
	}
	cfg := runtime.AgentConfig{ID: a.ID, Listen: cmp.Or(a.Listen, runtime.TopicCommands), Respond: runtime.TopicResponses, Handler: handle}
	if len(a.Skills) > 0 {
		card := &wire.AgentCard{Name: a.ID, Version: "1"}
		for _, s := range a.Skills {
			card.Capabilities = append(card.Capabilities, wire.CapabilityDescriptor{SkillID: s})
		}
		cfg.Card, cfg.CardTopic = card, runtime.TopicRegistry
	}
	agent, err := r.Client.NewAgent(cfg)
	if err != nil {
		panic(err)
	}
	h := agent.Start(ctx)
	r.handles = append(r.handles, h)
	if err := h.Ready(ctx); err != nil {
		panic(err)
	}
}

// Close stops the agents, draining what they are handling, and closes the
// client.
func (r *Rig) Close() {
	for _, h := range r.handles {
		_ = h.Shutdown(context.Background())
	}
	r.Client.Close()
}

// Says is an Answer that ignores the command and answers text.
func Says(text string) func([]byte) []byte {
	return func([]byte) []byte { return []byte(text) }
}
