package conversation_test

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func ExampleAssemble() {
	ctx := context.Background()
	client := runtime.NewClient(embedlog.New("shop", embedlog.Config{}), runtime.ClientConfig{})
	_ = client.Bootstrap(ctx, 4)
	conv := conversation.PerUser.ConversationFor("ada", nil)
	for _, turn := range []struct{ topic, agent, text string }{
		{runtime.TopicCommands, "ada", "where is my parcel?"},
		{runtime.TopicResponses, "support", "it left the depot this morning"},
		{runtime.TopicCommands, "ada", "thanks!"},
	} {
		_, _ = client.SendPlain(ctx, turn.topic, wire.Provenance{Conversation: conv, Agent: turn.agent}, []byte(turn.text))
	}
	history, _ := conversation.Assemble(ctx, client.Transport(), conv, conversation.Options{
		Policy: conversation.Chain{conversation.ByAgent{"ada"}, conversation.LastN(1)},
	})
	for _, m := range history {
		fmt.Printf("%s: %s\n", m.Provenance.Agent, m.Body())
	}
	// Output: ada: thanks!
}

func ExampleDerive() {
	fmt.Println(conversation.Derive("user-1"))
	// Output: 6X4VM88293CP9BFK3H58TFMMS7
}

func ExampleFold_Checkpoint() {
	ctx := context.Background()
	log := embedlog.New("ledger", embedlog.Config{})
	_ = log.EnsureTopics(ctx, 1, "ledger")
	client := runtime.NewClient(log, runtime.ClientConfig{})
	conv := conversation.Derive("account-7")
	deposit := func(cents string) {
		_, _ = client.SendPlain(ctx, "ledger", wire.Provenance{Conversation: conv}, []byte(cents))
	}
	balance := conversation.Fold[int]{
		Topics: []string{"ledger"},
		Step: func(total int, m *runtime.Message) int {
			var cents int
			_, _ = fmt.Sscan(string(m.Body()), &cents)
			return total + cents
		},
	}
	snapshots := conversation.NewMemorySnapshots()
	deposit("100")
	deposit("250")
	total, _ := balance.Checkpoint(ctx, log, snapshots, conv) // folds both, saves a snapshot
	fmt.Println(total)
	deposit("-50")
	total, _ = balance.LoadWith(ctx, log, snapshots, conv) // folds only the new record
	fmt.Println(total)
	// Output:
	// 350
	// 300
}

// A Scope is one conversation's working context: append turns, read the
// last few back as a prompt block.
func ExampleFor() {
	ctx := context.Background()
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{})
	_ = client.Bootstrap(ctx, 1, "agent.sessions")
	chat := conversation.For(client, conversation.Derive("user-7"), "agent.sessions")
	for _, turn := range []string{"hi", "book a table", "for two at eight"} {
		_, _ = chat.Append(ctx, "agent.sessions", []byte(turn))
	}
	block, err := chat.Block(ctx, 2)
	fmt.Println(block, err)
	// Output:
	// book a table
	// for two at eight <nil>
}
