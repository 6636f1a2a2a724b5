package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func TestAgentIDsAndGroupNamesKeepToTheSDKLimitOf255Bytes(t *testing.T) {
	c := newClient(t, embedlog.New("laser", embedlog.Config{}), clock.System{}, nil)
	h := handlerFunc(func(*runtime.Ctx) error { return nil })
	id255, id256 := strings.Repeat("a", 255), strings.Repeat("a", 256)
	if _, err := c.NewAgent(runtime.AgentConfig{ID: id255, Listen: runtime.TopicCommands, Handler: h}); err != nil {
		t.Fatalf("a 255-byte id: %v", err)
	}
	for _, cfg := range []runtime.AgentConfig{
		{ID: id256, Listen: runtime.TopicCommands, Handler: h},
		{ID: "billing", Group: id256, Listen: runtime.TopicCommands, Handler: h},
		{ID: "billing", Group: "billing\x00replicas", Listen: runtime.TopicCommands, Handler: h},
		{ID: "bill\u0085ing", Listen: runtime.TopicCommands, Handler: h},
	} {
		if _, err := c.NewAgent(cfg); runtime.CodeOf(err) != runtime.CodeConfig {
			t.Errorf("NewAgent(id %d bytes, group %q...) = %v, want CodeConfig", len(cfg.ID), cfg.Group[:min(len(cfg.Group), 12)], err)
		}
	}
	for _, cmd := range []runtime.Out{{From: id256, Body: []byte("x")}, {From: "shop", Target: id256, Body: []byte("x")}} {
		if _, err := c.Send(context.Background(), cmd); runtime.CodeOf(err) != runtime.CodeConfig {
			t.Errorf("Send(from %d bytes, target %d bytes) = %v, want CodeConfig", len(cmd.From), len(cmd.Target), err)
		}
	}
	if _, err := c.Send(context.Background(), runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: id256, Body: []byte("x")}); runtime.CodeOf(err) != runtime.CodeConfig {
		t.Errorf("Emit from a 256-byte id = %v, want CodeConfig", err)
	}
}

// Two agents with one id on one client would share a consumer group and
// steal each other's messages: the second is refused at start, naming the id.
func TestSecondAgentWithTheSameIDIsRefusedAtStart(t *testing.T) {
	c := newClient(t, embedlog.New("laser", embedlog.Config{}), clock.System{}, nil)
	first := runAgent(t, c, runtime.AgentConfig{ID: "billing", Handler: echo("first ")})
	second, err := c.NewAgent(runtime.AgentConfig{ID: "billing", Listen: "billing.other", Handler: echo("second ")})
	if err != nil {
		t.Fatal(err)
	}
	h := second.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	err = h.Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "agent stopped before it became ready") || runtime.CodeOf(err) != runtime.CodeConfig || !strings.Contains(err.Error(), `agent "billing" is already running on this client`) {
		t.Fatalf("Ready = %v, want a config error saying agent \"billing\" is already running", err)
	}
	if werr := h.Wait(); runtime.CodeOf(werr) != runtime.CodeConfig {
		t.Fatalf("Wait = %v, want the config error", werr)
	}

	// Once the first has stopped, the id is free again.
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	runAgent(t, c, runtime.AgentConfig{ID: "billing", Handler: echo("again ")})
}
