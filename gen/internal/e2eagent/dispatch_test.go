package e2eagent

import (
	"errors"
	"testing"

	"github.com/lasergo/laser/gen/internal/e2eagent/billingapi"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The generated dispatcher, driven by operation and input without a log:
// routing, input decoding, reply encoding and answered failures.

func TestDispatchRoutesByOperationAndAnswersWithTheEncodedReply(t *testing.T) {
	h := lasertest.Handler{Agent: BillingAgentID, RespondTopic: BillingRespondTopic, Operation: BillingOpCharge, ContentType: wire.ContentCBOR}
	sent, err := lasertest.Dispatch(t.Context(), h, BillingHandler(NewBilling()), ChargeCard{Card: "4242", Cents: 700})
	if err != nil {
		t.Fatal(err)
	}
	got, err := lasertest.Answer[Charged](sent)
	if err != nil || got != (Charged{Charge: "ch-4242", Cents: 700}) {
		t.Fatalf("answer %+v (%v)", got, err)
	}
	if sent[0].Topic != "billing.responses" {
		t.Fatalf("answered on %s, want the agent's respond topic", sent[0].Topic)
	}
}

func TestDispatchDecodesAJSONOperationFromItsContentType(t *testing.T) {
	h := lasertest.Handler{Agent: BillingAgentID, Operation: BillingOpQuote}
	sent, err := lasertest.Dispatch(t.Context(), h, BillingHandler(NewBilling()), QuoteRequest{Cents: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := lasertest.Answer[Quote](sent); err != nil || got != (Quote{Cents: 5000, Fee: 100}) {
		t.Fatalf("answer %+v (%v)", got, err)
	}
}

func TestDispatchAnswersAFailfAsARemoteErrorAndHandlesTheRequest(t *testing.T) {
	h := lasertest.Handler{Agent: BillingAgentID, Operation: BillingOpCharge, ContentType: wire.ContentCBOR}
	sent, err := lasertest.Dispatch(t.Context(), h, BillingHandler(NewBilling()), ChargeCard{Card: "4242"})
	if err != nil {
		t.Fatalf("the dispatcher returned %v, want nil: an answered failure is handled", err)
	}
	_, err = lasertest.Answer[Charged](sent)
	var remote *runtime.Error
	if !(errors.As(err, &remote) && remote.Remote()) || remote.Wire != wire.ErrorInvalidRequest || remote.Msg != "cannot charge 0 cents" {
		t.Fatalf("answer error %v, want the invalid-request remote error", err)
	}
}

func TestDispatchRejectsAnUnknownOperationAndAnswersUnsupported(t *testing.T) {
	h := lasertest.Handler{Agent: BillingAgentID, Operation: "teleport"}
	sent, err := lasertest.Dispatch(t.Context(), h, BillingHandler(NewBilling()), ChargeCard{})
	if runtime.CodeOf(err) != runtime.CodeRejected {
		t.Fatalf("dispatcher error %v, want a rejection (parked)", err)
	}
	var remote *runtime.Error
	if _, aerr := lasertest.Answer[Charged](sent); !(errors.As(aerr, &remote) && remote.Remote()) || remote.Wire != wire.ErrorUnsupported {
		t.Fatalf("answer %v, want an unsupported remote error", aerr)
	}
}

func TestDispatchOfACommandAnswersNothing(t *testing.T) {
	impl := NewBilling()
	h := lasertest.Handler{Agent: BillingAgentID, Operation: BillingOpRefund}
	sent, err := lasertest.Dispatch(t.Context(), h, BillingHandler(impl), billingapi.Refund{Charge: "ch-1", Cents: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-impl.Refunds; *got != (billingapi.Refund{Charge: "ch-1", Cents: 5}) {
		t.Fatalf("the refund handler got %+v", got)
	}
	if _, err := lasertest.Answer[struct{}](sent); !errors.Is(err, lasertest.ErrNoAnswer) {
		t.Fatalf("Answer = %v, want ErrNoAnswer", err)
	}
}
