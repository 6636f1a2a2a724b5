package otellaser_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/otellaser"
	"github.com/lasergo/laser/runtime"
)

// One line on the client traces every agent built on it and every publish.
func ExampleNew() {
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder()
	tel := otellaser.New(otellaser.Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))})
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{Logger: quiet(), Middleware: []runtime.Middleware{tel}})
	if err := client.Bootstrap(ctx, 1); err != nil {
		panic(err)
	}
	billing, err := client.NewAgent(runtime.AgentConfig{ID: "billing", Listen: runtime.TopicCommands, Respond: runtime.TopicResponses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error { return c.Respond([]byte("charged")) })})
	if err != nil {
		panic(err)
	}
	h := billing.Start(ctx)
	defer h.Stop()
	if err := h.Ready(ctx); err != nil {
		panic(err)
	}
	if _, err := client.Request(ctx, runtime.Out{From: "shop", Target: "billing", Body: []byte("9.99")}); err != nil {
		panic(err)
	}
	for len(spans.Ended()) < 3 { // the consumer span ends just after the reply is out
		time.Sleep(time.Millisecond)
	}
	var names []string
	for _, s := range spans.Ended() {
		names = append(names, fmt.Sprintf("%s (%s)", s.Name(), s.SpanKind()))
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Println(n)
	}
	// Output:
	// process agent.commands (consumer)
	// send agent.commands (producer)
	// send agent.responses (producer)
}
