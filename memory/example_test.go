package memory_test

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
)

func ExampleLog() {
	ctx := context.Background()
	client := runtime.NewClient(embedlog.New("shop", embedlog.Config{}), runtime.ClientConfig{})
	_ = client.Bootstrap(ctx, 4)
	mem := memory.New(client, memory.Config{}) // on agent.audit
	scope := memory.Scope{Conversation: conversation.Derive("ada"), Agent: "support"}

	_, _ = mem.Remember(ctx, scope, memory.Fact, []byte("prefers email"))
	wrong, _ := mem.Remember(ctx, scope, memory.Fact, []byte("lives in Paris"))
	_ = mem.Forget(ctx, scope, wrong)
	_ = mem.SetNamed(ctx, "ada/tone", []byte("formal"))

	items, _ := mem.Recall(ctx, scope, memory.Query{})
	for _, it := range items {
		fmt.Printf("%s: %s\n", it.Kind, it.Body)
	}
	tone, _, _ := mem.Named(ctx, "ada/tone")
	fmt.Printf("tone: %s\n", tone)
	// Output:
	// fact: prefers email
	// tone: formal
}
