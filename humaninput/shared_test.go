package humaninput_test

import (
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TestListCountsTheRequestsThatShareAPendingCorrelation: a forged request
// under a real one's correlation (in another conversation, so on another
// partition, read first or not) is counted against it, so no tool answers
// that correlation after showing one prompt of the two.
func TestListCountsTheRequestsThatShareAPendingCorrelation(t *testing.T) {
	ctx := t.Context()
	log := embedlog.New("laser", embedlog.Config{})
	client := runtime.NewClient(log, runtime.ClientConfig{})
	if err := client.Bootstrap(ctx, 4); err != nil {
		t.Fatal(err)
	}
	corr := client.IDs().NewID()
	planner, _ := wire.ParseAgentID("planner")
	for _, prompt := range []string{"delete production?", "rotate the staging log?"} {
		env := &wire.Envelope{Kind: wire.KindCommand, Conversation: client.IDs().NewID(), Source: planner, Correlation: &corr, Body: []byte(prompt)}
		if _, err := rawsend.Envelope(ctx, client, runtime.TopicHumanInput, env, wire.ContentRaw); err != nil {
			t.Fatal(err)
		}
	}
	l, err := humaninput.List(ctx, log, humaninput.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Pending) != 1 || l.Shared[corr] != 1 {
		t.Fatalf("pending %d, shared %v; want one pending request with one other under its correlation", len(l.Pending), l.Shared)
	}
}
