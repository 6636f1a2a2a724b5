package runtime_test

import (
	"context"
	"errors"
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
		if _, err := c.NewAgent(cfg); !errors.Is(err, runtime.ErrConfig) {
			t.Errorf("NewAgent(id %d bytes, group %q...) = %v, want ErrConfig", len(cfg.ID), cfg.Group[:min(len(cfg.Group), 12)], err)
		}
	}
	for _, cmd := range []runtime.Out{{From: id256, Body: []byte("x")}, {From: "shop", Target: id256, Body: []byte("x")}} {
		if _, err := c.Send(context.Background(), cmd); !errors.Is(err, runtime.ErrConfig) {
			t.Errorf("Send(from %d bytes, target %d bytes) = %v, want ErrConfig", len(cmd.From), len(cmd.Target), err)
		}
	}
	if _, err := c.Send(context.Background(), runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: id256, Body: []byte("x")}); !errors.Is(err, runtime.ErrConfig) {
		t.Errorf("Emit from a 256-byte id = %v, want ErrConfig", err)
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
	if !errors.Is(err, runtime.ErrNotReady) || !errors.Is(err, runtime.ErrConfig) || !strings.Contains(err.Error(), `agent "billing" is already running on this client`) {
		t.Fatalf("Ready = %v, want a config error saying agent \"billing\" is already running", err)
	}
	if werr := h.Wait(); !errors.Is(werr, runtime.ErrConfig) {
		t.Fatalf("Wait = %v, want the config error", werr)
	}

	// Once the first has stopped, the id is free again.
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	runAgent(t, c, runtime.AgentConfig{ID: "billing", Handler: echo("again ")})
}
