package main

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The intake agent holds generated clients (ClassifierClient,
// ResolverClient, AuditorClient). They are interfaces, so these tests hand
// it fakes and check what it asked of the other agents, without a log.

// fakeClassifier answers every ticket with verdict, or fails with err.
type fakeClassifier struct {
	verdict Classification
	err     error
	asked   []Ticket
}

func (f *fakeClassifier) Classify(_ context.Context, in Ticket, _ ...runtime.Option) (Classification, error) {
	f.asked = append(f.asked, in)
	return f.verdict, f.err
}

// fakeResolver records the refunds it is asked for.
type fakeResolver struct{ refunds []Resolution }

func (f *fakeResolver) Resolve(_ context.Context, in Resolution, _ ...runtime.Option) error {
	f.refunds = append(f.refunds, in)
	return nil
}

// fakeAuditor records the events published to it.
type fakeAuditor struct{ events []Triaged }

func (f *fakeAuditor) TicketTriaged(_ context.Context, in Triaged, _ ...runtime.Option) error {
	f.events = append(f.events, in)
	return nil
}

// intakeWithFakes returns an intake agent wired to fresh fakes.
func intakeWithFakes(verdict Classification, classifyErr error) (*Intake, *fakeClassifier, *fakeResolver, *fakeAuditor) {
	c, r, a := &fakeClassifier{verdict: verdict, err: classifyErr}, &fakeResolver{}, &fakeAuditor{}
	return &Intake{Classifier: c, Resolver: r, Auditor: a, Report: newReport(func(string) {})}, c, r, a
}

// submitCtx is the handler context of a "submit" command carrying ticket.
func submitCtx(t *testing.T, ticket Ticket) *runtime.Ctx {
	t.Helper()
	client := runtime.NewClient(embedlog.New("triage-unit", embedlog.Config{}), runtime.ClientConfig{})
	t.Cleanup(func() { client.Close() })
	conv := client.IDs().NewID()
	op := IntakeOpSubmit
	m := &runtime.Message{
		Topic:      IntakeListenTopic,
		Envelope:   &wire.Envelope{Kind: wire.KindCommand, Conversation: conv, Operation: &op},
		Provenance: wire.Provenance{Conversation: conv, Agent: "frontdesk"},
	}
	return lasertest.NewCtx(context.Background(), client, m, IntakeAgentID, IntakeRespondTopic)
}

func TestIntakeRefundsWhatTheClassifierSaysIsDue(t *testing.T) {
	intake, classifier, resolver, auditor := intakeWithFakes(Classification{Category: "billing", Priority: "high", Refund: 1999}, nil)
	ticket := Ticket{ID: "T-9", Customer: "ada", Text: "charged for nothing"}
	if err := intake.Submit(submitCtx(t, ticket), ticket); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(classifier.asked, []Ticket{ticket}) {
		t.Errorf("classifier asked %v, want the ticket once", classifier.asked)
	}
	if want := []Resolution{{TicketID: "T-9", Customer: "ada", Cents: 1999}}; !slices.Equal(resolver.refunds, want) {
		t.Errorf("resolver asked %v, want %v", resolver.refunds, want)
	}
	if want := []Triaged{{TicketID: "T-9", Category: "billing", Priority: "high"}}; !slices.Equal(auditor.events, want) {
		t.Errorf("auditor told %v, want %v", auditor.events, want)
	}
}

func TestIntakeSendsNoRefundWhenNoneIsDue(t *testing.T) {
	intake, _, resolver, auditor := intakeWithFakes(Classification{Category: "general", Priority: "low"}, nil)
	ticket := Ticket{ID: "T-3", Customer: "bob", Text: "where is my parcel"}
	if err := intake.Submit(submitCtx(t, ticket), ticket); err != nil {
		t.Fatal(err)
	}
	if len(resolver.refunds) != 0 {
		t.Errorf("resolver asked %v, want nothing", resolver.refunds)
	}
	if len(auditor.events) != 1 || auditor.events[0].Category != "general" {
		t.Errorf("auditor told %v, want one general triage", auditor.events)
	}
}

func TestIntakeResendsTheSameRefundOnADuplicateDelivery(t *testing.T) {
	intake, _, resolver, _ := intakeWithFakes(Classification{Category: "billing", Priority: "normal", Refund: 500}, nil)
	ticket := Ticket{ID: "T-4", Customer: "cy", Text: "refund me, I was billed twice"}
	if err := intake.Submit(submitCtx(t, ticket), ticket); err != nil {
		t.Fatal(err)
	}
	one := Resolution{TicketID: "T-4", Customer: "cy", Cents: 500}
	if want := []Resolution{one, one}; !slices.Equal(resolver.refunds, want) {
		t.Errorf("resolver asked %v, want the same refund twice (the idempotency key makes it apply once)", resolver.refunds)
	}
}

func TestIntakeFailsWithoutSideEffectsWhenClassifyingFails(t *testing.T) {
	boom := errors.New("classifier unavailable")
	intake, _, resolver, auditor := intakeWithFakes(Classification{}, boom)
	ticket := Ticket{ID: "T-5", Customer: "dee", Text: "charged"}
	err := intake.Submit(submitCtx(t, ticket), ticket)
	if !errors.Is(err, boom) {
		t.Fatalf("Submit = %v, want it to wrap %v", err, boom)
	}
	if len(resolver.refunds) != 0 || len(auditor.events) != 0 {
		t.Errorf("resolver asked %v, auditor told %v; want neither after a failed classification", resolver.refunds, auditor.events)
	}
}
