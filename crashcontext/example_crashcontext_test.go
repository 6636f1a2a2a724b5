package crashcontext_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/lasergo/laser/crashcontext"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// After an agent parked a command, one call tells what the conversation
// was doing and what was parked.
func ExampleRead() {
	ctx := context.Background()
	log := embedlog.New("laser", embedlog.Config{})
	client := runtime.NewClient(log, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	_ = client.Bootstrap(ctx, 1)
	parked := make(chan struct{})
	agent, _ := client.NewAgent(runtime.AgentConfig{
		ID: "billing", Listen: runtime.TopicCommands,
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error { return runtime.Reject(errors.New("card declined")) }),
		Tuning:  runtime.Tuning{DeadLetterSink: func(context.Context, runtime.DeadLetter) { close(parked) }},
	})
	h := agent.Start(ctx)
	_ = h.Ready(ctx)
	defer h.Shutdown(ctx)
	conv := wire.ID{7}
	_, _ = client.Send(ctx, runtime.Out{From: "planner", Target: "billing", Body: []byte("charge card 4242")}, runtime.WithConversation(conv))
	<-parked

	cc, err := crashcontext.Read(ctx, log, conv, crashcontext.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(cc.Journal), string(cc.Journal[0].Body()))
	fmt.Println(cc.DeadLetter.Capsule.Reason, cc.LastDecision == nil)
	// Output:
	// 1 charge card 4242
	// rejected true
}
