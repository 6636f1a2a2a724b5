package a2a_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/internal/bridgetest/desk"
	"github.com/lasergo/laser/runtime"
)

func TestAMessageTheGovernorBlocksOpensNoTask(t *testing.T) {
	policy := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		if a.Kind == effect.BridgeCall {
			return govern.Block("no quotes from outside"), nil
		}
		return govern.Allow(), nil
	})
	client := runtime.NewClient(embedlog.New("bridges", embedlog.Config{}), runtime.ClientConfig{EffectGate: govern.NewGate(policy, govern.Config{})})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Bootstrap(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if err := client.Transport().EnsureTopics(t.Context(), 1, desk.DeskListenTopic); err != nil {
		t.Fatal(err)
	}
	b := newBridge(t, client, desk.DeskOperations())
	if _, err := b.Submit(t.Context(), data("quote", map[string]any{"sku": "pen", "qty": 1})); !errors.Is(err, govern.ErrBlocked) {
		t.Fatalf("submit: %v, want the policy's block", err)
	}
	if n, _ := client.Transport().NextOffset(t.Context(), desk.DeskListenTopic, 0); n != 0 {
		t.Fatalf("%d commands were published for a blocked message", n)
	}
}
