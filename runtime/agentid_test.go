package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lasergo/laser/memlog"
	"github.com/lasergo/laser/runtime"
)

func TestAgentIDsAndGroupNamesKeepToTheSDKLimitOf255Bytes(t *testing.T) {
	c := newClient(t, memlog.New("laser"), runtime.SystemClock{}, nil)
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
	for _, cmd := range []runtime.Command{{From: id256, Body: []byte("x")}, {From: "shop", Target: id256, Body: []byte("x")}} {
		if _, err := c.SendCommand(context.Background(), cmd); !errors.Is(err, runtime.ErrConfig) {
			t.Errorf("SendCommand(from %d bytes, target %d bytes) = %v, want ErrConfig", len(cmd.From), len(cmd.Target), err)
		}
	}
	if _, err := c.Emit(context.Background(), runtime.TopicCommands, id256, []byte("x")); !errors.Is(err, runtime.ErrConfig) {
		t.Errorf("Emit from a 256-byte id = %v, want ErrConfig", err)
	}
}
