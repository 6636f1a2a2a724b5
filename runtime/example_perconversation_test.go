package runtime_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// An agent whose handler waits on a model runs many conversations at once
// with PerConversation, each conversation's messages in log order; a
// generated agent takes the same Tuning in its AgentConfig (see the
// generated <Name>AgentConfig).
func ExamplePerConversation() {
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{Logger: logger})
	defer client.Close()
	if err := client.Bootstrap(ctx, 1); err != nil {
		panic(err)
	}
	var mu sync.Mutex
	seen := map[string][]string{}
	done := make(chan struct{}, 6)
	agent, err := client.NewAgent(runtime.AgentConfig{
		ID:     "support",
		Listen: runtime.TopicCommands,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			turn, _, _ := strings.Cut(string(c.Message().Body()), ":")
			mu.Lock()
			seen[turn] = append(seen[turn], string(c.Message().Body()))
			mu.Unlock()
			done <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(64)},
	})
	if err != nil {
		panic(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		panic(err)
	}
	alice, bob := wire.IDFromUint128(1, 1), wire.IDFromUint128(1, 2)
	for _, m := range []struct {
		conv wire.ID
		body string
	}{{alice, "alice:hello"}, {bob, "bob:hi"}, {alice, "alice:my order"}, {bob, "bob:refund"}, {alice, "alice:thanks"}, {bob, "bob:bye"}} {
		if _, err := client.SendPlain(ctx, runtime.TopicCommands, wire.Provenance{Conversation: m.conv}, []byte(m.body)); err != nil {
			panic(err)
		}
	}
	for range 6 {
		<-done
	}
	if err := h.Shutdown(ctx); err != nil {
		panic(err)
	}
	fmt.Println(strings.Join(seen["alice"], ", "))
	fmt.Println(strings.Join(seen["bob"], ", "))
	// Output:
	// alice:hello, alice:my order, alice:thanks
	// bob:hi, bob:refund, bob:bye
}
