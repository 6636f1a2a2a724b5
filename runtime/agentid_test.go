package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lasergo/laser/memlog"
	"github.com/lasergo/laser/runtime"
)

// Two agents with one id on one client would share a consumer group and
// steal each other's messages: the second is refused at start, naming the id.
func TestSecondAgentWithTheSameIDIsRefusedAtStart(t *testing.T) {
	c := newClient(t, memlog.New("laser"), runtime.SystemClock{}, nil)
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
