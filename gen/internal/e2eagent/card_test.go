package e2eagent

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
)

// TestGeneratedAgentPublishesItsCardOnStart: with AgentConfig.CardTopic set
// the generated constructor's agent publishes BillingCard as it starts, so a
// registry refreshed after Ready finds it; without it nothing is published.
func TestGeneratedAgentPublishesItsCardOnStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := embedlog.New("laser", embedlog.Config{})
	client := runtime.NewClient(tr, runtime.ClientConfig{})
	defer client.Close()
	if err := client.Bootstrap(ctx, 1, "billing.commands"); err != nil {
		t.Fatal(err)
	}
	reg := registry.New(tr, registry.Config{Topic: "cards"})
	quiet, err := NewBillingAgent(client, NewBilling())
	if err != nil {
		t.Fatal(err)
	}
	q := quiet.Start(ctx)
	if err := q.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	_ = q.Shutdown(ctx)
	if err := reg.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(reg.Cards()); n != 0 {
		t.Fatalf("an agent without a CardTopic published %d cards", n)
	}

	cfg := BillingAgentConfig(NewBilling())
	cfg.CardTopic = "cards"
	agent, err := client.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Shutdown(ctx)
	if err := reg.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	e, ok := reg.Card("billing")
	if !ok {
		t.Fatal("the started agent's card is not in the registry")
	}
	got, _ := e.Card.Marshal()
	want, _ := BillingCard().Marshal()
	if !bytes.Equal(got, want) {
		t.Fatalf("published card differs from BillingCard()")
	}
}
