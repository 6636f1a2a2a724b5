package lasertest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func TestRunGivesTheHandlerTheMessageAConsumerWouldSee(t *testing.T) {
	h := lasertest.Handler{Agent: "billing", From: "shop", Topic: "billing.commands", Operation: "refund"}
	var got *runtime.Message
	var gotIn Order
	sent, err := lasertest.Run(context.Background(), h, func(c *runtime.Ctx, in Order) error {
		got, gotIn = c.Message(), in
		if c.Agent() != "billing" {
			t.Errorf("Ctx.Agent() = %q, want billing", c.Agent())
		}
		return c.Message().Decode(&gotIn, wire.ContentJSON)
	}, Order{Cents: 5})
	if err != nil || len(sent) != 0 {
		t.Fatalf("Run = %v, %d sent; want nil, nothing sent", err, len(sent))
	}
	if got.Kind() != wire.KindCommand || got.Operation() != "refund" || got.Topic != "billing.commands" ||
		got.Provenance.Agent != "shop" || got.Provenance.Target != "billing" || got.Correlation() == "" {
		t.Fatalf("message: kind %q op %q topic %q from %q to %q corr %q", got.Kind(), got.Operation(), got.Topic,
			got.Provenance.Agent, got.Provenance.Target, got.Correlation())
	}
	if gotIn.Cents != 5 {
		t.Fatalf("the body decodes to %+v, want the input", gotIn)
	}
}

func TestRunReturnsEveryRecordTheHandlerPublishedInOrder(t *testing.T) {
	h := lasertest.Handler{Agent: "billing", From: "shop", RespondTopic: "billing.responses"}
	var conv wire.ID
	sent, err := lasertest.Run(context.Background(), h, func(c *runtime.Ctx, in Order) error {
		conv = c.Message().Provenance.Conversation
		if _, err := c.Client().Send(c, runtime.Out{Kind: wire.KindEvent, Topic: "billing.events", Body: []byte("charging")}); err != nil {
			return err
		}
		return c.Respond([]byte("done"))
	}, Order{Cents: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 2 {
		t.Fatalf("sent %d records, want the event and the answer", len(sent))
	}
	ev, answer := sent[0], sent[1]
	if ev.Topic != "billing.events" || ev.Message.Kind() != wire.KindEvent || string(ev.Message.Body()) != "charging" ||
		ev.Message.Provenance.Conversation != conv {
		t.Fatalf("event: %s %q %q in %s", ev.Topic, ev.Message.Kind(), ev.Message.Body(), ev.Message.Provenance.Conversation)
	}
	if answer.Topic != "billing.responses" || answer.Message.Provenance.Target != "shop" || string(answer.Message.Body()) != "done" ||
		answer.Message.Correlation() == "" {
		t.Fatalf("answer: %s to %q %q corr %q", answer.Topic, answer.Message.Provenance.Target, answer.Message.Body(), answer.Message.Correlation())
	}
}

func TestRunReturnsTheHandlersErrorWithWhatItSentBefore(t *testing.T) {
	boom := errors.New("ledger closed")
	sent, err := lasertest.Run(context.Background(), lasertest.Handler{}, func(c *runtime.Ctx, in string) error {
		if _, err := c.Send("audit", "", []byte("tried")); err != nil {
			return err
		}
		return boom
	}, "x")
	if !errors.Is(err, boom) || !runtime.IsRetryable(err) {
		t.Fatalf("Run error %v, want the handler's (retryable)", err)
	}
	if len(sent) != 1 || sent[0].Topic != "audit" {
		t.Fatalf("sent %+v, want the audit record", sent)
	}
}

func TestRunRequestReturnsTheAnswerWithoutPublishingIt(t *testing.T) {
	out, sent, err := lasertest.RunRequest(context.Background(), lasertest.Handler{}, func(c *runtime.Ctx, in Order) (Receipt, error) {
		return Receipt{ID: "r-2"}, nil
	}, Order{Cents: 1})
	if err != nil || out.ID != "r-2" || len(sent) != 0 {
		t.Fatalf("RunRequest = %+v, %d sent, %v", out, len(sent), err)
	}
}

func TestManualClockFiresTimersOnlyWhenAdvancedPastThem(t *testing.T) {
	start := time.Unix(1000, 0)
	clock := lasertest.NewManualClock(start)
	soon, later := clock.After(time.Second), clock.After(time.Minute)
	if err := clock.BlockUntil(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Second)
	select {
	case at := <-soon:
		if !at.Equal(start.Add(2 * time.Second)) {
			t.Fatalf("fired at %v", at)
		}
	default:
		t.Fatal("the due timer did not fire")
	}
	select {
	case <-later:
		t.Fatal("a timer fired before it was due")
	default:
	}
	if d, ok := clock.NextTimer(); !ok || d != 58*time.Second {
		t.Fatalf("NextTimer = %v, %v; want 58s", d, ok)
	}
}
