package reliability_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/reliability"
	"github.com/lasergo/laser/runtime"
)

// The crash test's order check: a conversation plan's command names its
// conversation's previous normal command, and the effect handler records
// an out-of-order event when that effect is not applied yet.
func TestEffectHandlerReportsAnEffectAppliedBeforeItsPredecessor(t *testing.T) {
	plan, err := reliability.NewConversationPlan(7, 60, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The first two normal commands of conversation 0, published in
	// reverse order: the second's effect comes first.
	var first, second *reliability.Command
	for i := 0; i < len(plan.Commands) && second == nil; i += 2 {
		if c := &plan.Commands[i]; c.Kind == reliability.Normal {
			if first == nil {
				first = c
			} else {
				second = c
			}
		}
	}
	dir := t.TempDir()
	store, err := reliability.OpenEffectStore(filepath.Join(dir, "effects"))
	if err != nil {
		t.Fatal(err)
	}
	events, err := reliability.OpenEventLog(filepath.Join(dir, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	log := embedlog.New("laser", embedlog.Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := log.EnsureTopics(ctx, 1, "cmds", "dlq"); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Publish(ctx, "cmds", second.Record, first.Record); err != nil {
		t.Fatal(err)
	}
	applied := make(chan string, 2)
	c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
		Topic: "cmds", Group: "g", Agent: "worker",
		Handler: &reliability.EffectHandler{Store: store, Events: events, OnEffect: func(key string, _ bool) { applied <- key }},
		Client:  runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Tuning:  runtime.Tuning{DeadLetterTopic: "dlq"},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, nil, stop) }()
	for range 2 {
		select {
		case <-applied:
		case <-ctx.Done():
			t.Fatal("effects not applied")
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ev, err := reliability.ReadEvents(filepath.Join(dir, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.ByKey[reliability.EventOutOfOrder]; len(got) != 1 || got[second.Key] != 1 {
		t.Fatalf("out-of-order events %v, want one for %s (applied before %s)", got, second.Key, first.Key)
	}
}
