package main

//go:generate go tool lasergen

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/lasergo/laser/runtime"
)

// Ticket is a customer's support request.
type Ticket struct {
	ID       string `json:"id"`
	Customer string `json:"customer"`
	Text     string `json:"text"`
}

// Classification is the classifier's verdict on a ticket.
type Classification struct {
	Category string `json:"category"`
	Priority string `json:"priority"`
	Refund   int64  `json:"refund_cents"` // 0 when no refund is due
}

// Resolution asks the resolver to act on a classified ticket.
type Resolution struct {
	TicketID string `json:"ticket_id"`
	Customer string `json:"customer"`
	Cents    int64  `json:"cents"`
}

// Triaged is the event the auditor keeps.
type Triaged struct {
	TicketID string `json:"ticket_id"`
	Category string `json:"category"`
	Priority string `json:"priority"`
}

// Intake takes tickets in, asks the classifier, hands refunds to the
// resolver and tells the auditor.
//
//laser:agent id=intake listen=triage.intake respond=agent.responses ct=json
type Intake struct {
	Classifier ClassifierClient
	Resolver   ResolverClient
	Auditor    AuditorClient
	Report     *Report
}

// Submit handles one ticket.
//
//laser:handle op=submit
func (a *Intake) Submit(ctx *runtime.Ctx, in Ticket) error {
	a.Report.say("intake", "%s from %s: %q", in.ID, in.Customer, in.Text)
	conv := runtime.WithConversation(ctx.Message().Provenance.Conversation)
	verdict, err := a.Classifier.Classify(ctx, in, conv)
	if err != nil {
		return fmt.Errorf("classify %s: %w", in.ID, err)
	}
	a.Report.say("intake", "%s is %s, priority %s", in.ID, verdict.Category, verdict.Priority)
	if verdict.Refund > 0 {
		// The idempotency key names the effect, not the message: however
		// often this command is delivered, the refund happens once.
		refund := Resolution{TicketID: in.ID, Customer: in.Customer, Cents: verdict.Refund}
		key := runtime.WithIdempotencyKey("refund-" + in.ID)
		if err := a.Resolver.Resolve(ctx, refund, conv, key); err != nil {
			return err
		}
		a.Report.sent()
		if strings.Contains(in.Text, "twice") {
			// A flaky network made intake send the command again.
			a.Report.say("intake", "%s: the resolve command is sent a second time (a duplicate delivery)", in.ID)
			if err := a.Resolver.Resolve(ctx, refund, conv, key); err != nil {
				return err
			}
			a.Report.sent()
		}
	}
	return a.Auditor.TicketTriaged(ctx, Triaged{TicketID: in.ID, Category: verdict.Category, Priority: verdict.Priority}, conv)
}

// Classifier sorts tickets.
//
//laser:agent id=classifier listen=triage.classify respond=agent.responses ct=json
type Classifier struct {
	Report *Report
}

// Classify answers with a category, a priority and the refund due.
//
//laser:handle op=classify
func (a *Classifier) Classify(_ *runtime.Ctx, in Ticket) (Classification, error) {
	text := strings.ToLower(in.Text)
	var c Classification
	switch {
	case strings.Contains(text, "charged"):
		c = Classification{Category: "billing", Priority: "high", Refund: 1999}
	case strings.Contains(text, "refund"):
		c = Classification{Category: "billing", Priority: "normal", Refund: 500}
	default:
		c = Classification{Category: "general", Priority: "low"}
	}
	a.Report.say("classifier", "%s -> %s/%s", in.ID, c.Category, c.Priority)
	return c, nil
}

// Resolver issues refunds, each exactly once.
//
//laser:agent id=resolver listen=triage.resolve ct=json
type Resolver struct {
	Report *Report
	// gatewayBusy makes the first attempt of these tickets fail, to show a
	// retry.
	gatewayBusy map[string]bool
}

// errGatewayBusy is a transient failure: the consumer retries it.
var errGatewayBusy = errors.New("payment gateway busy")

// Resolve issues the refund.
//
//laser:handle op=resolve
func (a *Resolver) Resolve(_ *runtime.Ctx, in Resolution) error {
	if a.gatewayBusy[in.TicketID] {
		delete(a.gatewayBusy, in.TicketID)
		a.Report.say("resolver", "%s: %v, will retry", in.TicketID, errGatewayBusy)
		a.Report.retry()
		return errGatewayBusy
	}
	a.Report.refund(in)
	return nil
}

// Auditor keeps the triage trail.
//
//laser:agent id=auditor listen=triage.audit ct=json
type Auditor struct {
	Report *Report
}

// TicketTriaged records a triage decision.
//
//laser:event op=ticket_triaged
func (a *Auditor) TicketTriaged(_ *runtime.Ctx, in Triaged) error {
	a.Report.audit(in)
	return nil
}

// Report is the account the agents write as they go and the figures the
// summary prints. It is the effect store too: refunds keyed by ticket.
type Report struct {
	mu       sync.Mutex
	out      func(string)
	refunds  map[string]int64
	sends    int
	applied  int
	retries  int
	audits   int
	parked   []string
	progress chan struct{}
}

func newReport(out func(string)) *Report {
	return &Report{out: out, refunds: map[string]int64{}, progress: make(chan struct{}, 64)}
}

func (r *Report) say(agent, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out(fmt.Sprintf("%-10s  %s", agent, fmt.Sprintf(format, args...)))
}

func (r *Report) sent() {
	r.mu.Lock()
	r.sends++
	r.mu.Unlock()
}

func (r *Report) retry() {
	r.mu.Lock()
	r.retries++
	r.mu.Unlock()
}

func (r *Report) refund(in Resolution) {
	r.mu.Lock()
	r.applied++
	if _, done := r.refunds[in.TicketID]; !done {
		r.refunds[in.TicketID] = in.Cents
	}
	r.mu.Unlock()
	r.say("resolver", "%s: refunded %d.%02d to %s", in.TicketID, in.Cents/100, in.Cents%100, in.Customer)
	r.progress <- struct{}{}
}

func (r *Report) audit(in Triaged) {
	r.mu.Lock()
	r.audits++
	r.mu.Unlock()
	r.say("auditor", "%s recorded (%s/%s)", in.TicketID, in.Category, in.Priority)
	r.progress <- struct{}{}
}

func (r *Report) deadLetter(dl runtime.DeadLetter) {
	r.mu.Lock()
	detail := ""
	if dl.Capsule.Detail != nil {
		detail = *dl.Capsule.Detail
	}
	// A rejection's detail already reads "rejected: ...", as the reference
	// writes it; other reasons are named here.
	why := detail
	if reason := fmt.Sprint(dl.Capsule.Reason); !strings.HasPrefix(detail, reason+": ") {
		why = reason + ": " + detail
	}
	r.parked = append(r.parked, fmt.Sprintf("%s (source %s, capsule %s in agent.dlq)", why, dl.Capsule.Source, dl.Position))
	r.mu.Unlock()
	r.say("dlq", "%s %s parked after %d attempt(s): %s", dl.Message.Topic, dl.Message.Position, dl.Capsule.Attempts, why)
	r.progress <- struct{}{}
}

// Figures is the outcome of a run.
type Figures struct {
	Refunds     map[string]int64
	Sent        int // resolve commands intake sent
	Applied     int // resolver runs that applied a refund
	Retries     int
	Audits      int
	DeadLetters []string
}

func (r *Report) figures() Figures {
	r.mu.Lock()
	defer r.mu.Unlock()
	refunds := make(map[string]int64, len(r.refunds))
	for k, v := range r.refunds {
		refunds[k] = v
	}
	return Figures{Refunds: refunds, Sent: r.sends, Applied: r.applied, Retries: r.retries, Audits: r.audits, DeadLetters: append([]string(nil), r.parked...)}
}
