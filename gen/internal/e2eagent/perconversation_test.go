package e2eagent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
)

// A generated constructor takes PerConversation in the Tuning of its AgentConfig,
// and the typed calls it serves keep their answers apart.
func TestGeneratedAgentRunsPerConversation(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { client.Close() })
	if err := client.Bootstrap(ctx, 2, "billing.commands", "billing.responses"); err != nil {
		t.Fatal(err)
	}
	cfg := BillingAgentConfig(NewBilling())
	cfg.Tuning.Concurrency = runtime.PerConversation(8)
	agent, err := client.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	billing := NewBillingClient(client, caller)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			card := fmt.Sprintf("42%02d", i)
			got, err := billing.Charge(ctx, ChargeCard{Card: card, Cents: int64(100 + i)})
			if err == nil && got != (Charged{Charge: "ch-" + card, Cents: int64(100 + i)}) {
				err = fmt.Errorf("charge %d answered %+v", i, got)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
