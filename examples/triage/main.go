// Command triage runs a support-ticket triage system of four generated
// agents: intake asks the classifier (typed request/reply), hands refunds
// to the resolver (a command with an idempotency key, delivered twice and
// applied once, retried once on a transient failure) and tells the auditor
// (an event). One malformed ticket ends in the dead-letter queue.
//
//	go run ./examples/triage                       # on the embedded log
//	go run ./examples/triage -iggy iggy://iggy:iggy@127.0.0.1:8090/triage
//	go run ./examples/triage -trace                # and print the trace tree (OpenTelemetry)
//
// With LASER_IGGY_ADDR set, the program runs on that Iggy server instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/otellaser"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func main() {
	// The Iggy SDK writes every login to the standard logger; this program
	// reports what matters itself.
	log.SetOutput(io.Discard)
	addr := flag.String("iggy", os.Getenv("LASER_IGGY_ADDR"), "run on this Iggy server (iggy://user:password@host:port/stream) instead of the embedded log")
	traced := flag.Bool("trace", false, "trace the agents with OpenTelemetry (package otellaser) and print each trace as a tree at the end")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var tr runtime.Transport = embedlog.New("triage", embedlog.Config{})
	where := "the embedded log"
	if *addr != "" {
		t, err := iggy.Dial(ctx, *addr, iggy.Config{})
		if err != nil {
			fmt.Fprintln(os.Stderr, "triage:", err)
			os.Exit(1)
		}
		defer t.Close()
		tr, where = t, "Iggy stream "+t.Stream()
	}
	fmt.Printf("triage: four agents on %s\n\n", where)
	var (
		spans      *tracetest.SpanRecorder
		middleware []runtime.Middleware
	)
	if *traced {
		spans = tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		middleware = append(middleware, otellaser.New(otellaser.Config{TracerProvider: tp}))
	}
	if _, err := run(ctx, tr, os.Stdout, middleware...); err != nil {
		fmt.Fprintln(os.Stderr, "triage:", err)
		os.Exit(1)
	}
	if spans != nil {
		printTraceTree(os.Stdout, spans.Ended())
	}
}

// tickets are what customers send; the last one is not even JSON.
var tickets = []Ticket{
	{ID: "T-1", Customer: "ada", Text: "I was charged twice for order 1001"},
	{ID: "T-2", Customer: "grace", Text: "Please refund my late delivery"},
	{ID: "T-3", Customer: "linus", Text: "How do I change my password?"},
	{ID: "T-4", Customer: "barbara", Text: "Charged but never received the parcel"},
}

const malformed = `{"id": "T-5", "text": "this ticket is cut off`

// run starts the agents on tr, submits the tickets, waits until every one
// is settled, shuts the agents down and prints the summary. middleware
// (tracing, say) is installed on the client every agent runs on.
func run(ctx context.Context, tr runtime.Transport, w io.Writer, middleware ...runtime.Middleware) (Figures, error) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	client := runtime.NewClient(tr, runtime.ClientConfig{Logger: logger, Middleware: middleware})
	defer client.Close()
	if err := client.Bootstrap(ctx, 2, "triage.intake", "triage.classify", "triage.resolve", "triage.audit"); err != nil {
		return Figures{}, err
	}
	report := newReport(func(line string) { fmt.Fprintln(w, line) })

	tuning := runtime.Tuning{
		Retry: runtime.RetryPolicy{MaxAttempts: 3, BaseDelay: 50 * time.Millisecond},
		DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) {
			report.deadLetter(dl)
		},
	}
	// newAgent builds an agent from its generated configuration with the
	// tuning above.
	newAgent := func(cfg runtime.AgentConfig) (*runtime.Agent, error) {
		cfg.Tuning = tuning
		return client.NewAgent(cfg)
	}
	intake, err := newAgent(IntakeAgentConfig(&Intake{
		Classifier: NewClassifierClient(client, "intake"),
		Resolver:   NewResolverClient(client, "intake"),
		Auditor:    NewAuditorClient(client, "intake"),
		Report:     report,
	}))
	if err != nil {
		return Figures{}, err
	}
	classifier, err := newAgent(ClassifierAgentConfig(&Classifier{Report: report}))
	if err != nil {
		return Figures{}, err
	}
	resolver, err := newAgent(ResolverAgentConfig(&Resolver{Report: report, gatewayBusy: map[string]bool{"T-2": true}}))
	if err != nil {
		return Figures{}, err
	}
	auditor, err := newAgent(AuditorAgentConfig(&Auditor{Report: report}))
	if err != nil {
		return Figures{}, err
	}
	var handles []*runtime.AgentHandle
	for _, a := range []*runtime.Agent{intake, classifier, resolver, auditor} {
		h := a.Start(ctx)
		if err := h.Ready(ctx); err != nil {
			return Figures{}, fmt.Errorf("agent %s: %w", a.ID(), err)
		}
		handles = append(handles, h)
	}

	customers := NewIntakeClient(client, "web-form")
	for _, t := range tickets {
		if err := customers.Submit(ctx, t); err != nil {
			return Figures{}, err
		}
	}
	// The poison message: a submit whose body does not decode.
	if _, err := client.Send(ctx, runtime.Out{Topic: "triage.intake", From: "web-form", Target: "intake", Body: []byte(malformed)},
		runtime.WithOperation("submit"), runtime.WithContentType(wire.ContentJSON)); err != nil {
		return Figures{}, err
	}

	// Every ticket settles as an audit record, refunds as a resolver
	// effect, and the malformed one as a dead letter.
	want := len(tickets) + 3 + 1
	for range want {
		select {
		case <-report.progress:
		case <-ctx.Done():
			return report.figures(), fmt.Errorf("waiting for the tickets to settle: %w", ctx.Err())
		}
	}
	// The duplicate refund command settles as nothing (dedup drops it), so
	// no report says when: wait until the resolver has consumed every
	// resolve command, or stopping it could leave the duplicate unread.
	if err := waitConsumed(ctx, tr, client, "triage.resolve", "resolver"); err != nil {
		return report.figures(), err
	}
	for _, h := range handles {
		if err := h.Shutdown(ctx); err != nil {
			return report.figures(), err
		}
	}
	f := report.figures()
	printSummary(w, f)
	return f, nil
}

// waitConsumed waits until group has consumed every record topic holds
// now, checking its stored offsets every few milliseconds.
func waitConsumed(ctx context.Context, tr runtime.Transport, client *runtime.Client, topic, group string) error {
	partitions, err := tr.Partitions(ctx, topic)
	if err != nil {
		return err
	}
	for p := range partitions {
		next, err := tr.NextOffset(ctx, topic, p)
		if err != nil {
			return err
		}
		for next > 0 {
			done, err := client.Consumed(ctx, topic, group, runtime.Position{Partition: p, Offset: next - 1})
			if err != nil {
				return err
			}
			if done {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s to consume %s: %w", group, topic, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return nil
}

func printSummary(w io.Writer, f Figures) {
	ids := make([]string, 0, len(f.Refunds))
	total := int64(0)
	for id, cents := range f.Refunds {
		ids = append(ids, id)
		total += cents
	}
	sort.Strings(ids)
	fmt.Fprintf(w, "\nsummary\n")
	fmt.Fprintf(w, "  tickets submitted   %d (+1 malformed)\n", len(tickets))
	fmt.Fprintf(w, "  audit records       %d\n", f.Audits)
	fmt.Fprintf(w, "  refunds applied     %d (%s), %d.%02d in all\n", len(f.Refunds), strings.Join(ids, ", "), total/100, total%100)
	fmt.Fprintf(w, "  resolve commands    %d sent, %d applied: %d duplicate dropped by its idempotency key\n", f.Sent, f.Applied, f.Sent-f.Applied)
	fmt.Fprintf(w, "  handler retries     %d\n", f.Retries)
	fmt.Fprintf(w, "  dead letters        %d\n", len(f.DeadLetters))
	for _, d := range f.DeadLetters {
		fmt.Fprintf(w, "    %s\n", d)
	}
}
