package e2eagent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// A command without an operation, as the reference SDK's contract sends
// one: routed to an agent's only command operation, or to the one its
// default= names, and rejected (answered unsupported) when neither exists.

func TestDispatchRoutesACommandWithoutAnOperationToTheOnlyCommandOperation(t *testing.T) {
	h := lasertest.Handler{Agent: EchoAgentID, RespondTopic: EchoRespondTopic, ContentType: wire.ContentCBOR}
	sent, err := lasertest.Dispatch(t.Context(), h, EchoHandler(&Echo{}), Text{Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := lasertest.Answer[Text](sent); err != nil || got.Text != "HI" {
		t.Fatalf("answer %+v (%v), want Shout's HI", got, err)
	}
}

func TestDispatchRoutesACommandWithoutAnOperationToTheNamedDefault(t *testing.T) {
	h := lasertest.Handler{Agent: DeskAgentID, RespondTopic: DeskRespondTopic, ContentType: wire.ContentCBOR}
	sent, err := lasertest.Dispatch(t.Context(), h, DeskHandler(&Desk{}), Text{Text: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := lasertest.Answer[Text](sent); err != nil || got.Text != "cba" {
		t.Fatalf("answer %+v (%v), want Reverse's cba", got, err)
	}
}

func TestDispatchStillRoutesTheOtherOperationsOfAnAgentWithADefault(t *testing.T) {
	h := lasertest.Handler{Agent: DeskAgentID, RespondTopic: DeskRespondTopic, Operation: DeskOpCount, ContentType: wire.ContentCBOR}
	sent, err := lasertest.Dispatch(t.Context(), h, DeskHandler(&Desk{}), Text{Text: "abcd"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := lasertest.Answer[int](sent); err != nil || got != 4 {
		t.Fatalf("answer %d (%v), want Count's 4", got, err)
	}
}

func TestDispatchRejectsACommandWithoutAnOperationWhenNoDefaultIsNamed(t *testing.T) {
	h := lasertest.Handler{Agent: BillingAgentID, RespondTopic: BillingRespondTopic, ContentType: wire.ContentCBOR}
	sent, err := lasertest.Dispatch(t.Context(), h, BillingHandler(NewBilling()), ChargeCard{Card: "4242", Cents: 1})
	if runtime.CodeOf(err) != runtime.CodeRejected || !strings.Contains(err.Error(), "default=<operation>") {
		t.Fatalf("dispatcher error %v, want a rejection naming default=: billing has several operations and no default", err)
	}
	var remote *runtime.Error
	if _, aerr := lasertest.Answer[Charged](sent); !(errors.As(aerr, &remote) && remote.Remote()) || remote.Wire != wire.ErrorUnsupported {
		t.Fatalf("answer %v, want an unsupported remote error", aerr)
	}
}

func TestACommandWithoutAnOperationIsAnsweredByTheDefaultOverTheLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { client.Close() })
	if err := client.Bootstrap(ctx, 2, DeskListenTopic, DeskRespondTopic); err != nil {
		t.Fatal(err)
	}
	agent, err := NewDeskAgent(client, &Desk{})
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(ctx)
	t.Cleanup(func() {
		if err := h.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	if err := h.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	body, err := runtime.EncodeBody(Text{Text: "log"}, wire.ContentCBOR)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := client.Request(ctx, runtime.Out{Topic: DeskListenTopic, From: caller, Target: DeskAgentID, Body: body},
		runtime.WithReplyTopic(DeskRespondTopic), runtime.WithContentType(wire.ContentCBOR))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Operation() != "" {
		t.Errorf("reply operation %q, want none, as the command had", reply.Operation())
	}
	var got Text
	if err := reply.Decode(&got, wire.ContentCBOR); err != nil || got.Text != "gol" {
		t.Fatalf("reply %+v (%v), want Reverse's gol", got, err)
	}
}
