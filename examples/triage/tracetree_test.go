package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/otellaser"
	"github.com/lasergo/laser/runtime"
)

func TestTriageTracedPrintsOneTreePerTicket(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spans := tracetest.NewSpanRecorder()
	tel := otellaser.New(otellaser.Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))})
	var out bytes.Buffer
	f, err := run(ctx, embedlog.New("triage", embedlog.Config{}), &out, []runtime.Middleware{tel}...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	checkOutcome(t, f, out.String())
	var tree bytes.Buffer
	printTraceTree(&tree, spans.Ended())
	got := tree.String()
	if n := strings.Count(got, "  trace "); n != len(tickets)+1 {
		t.Errorf("%d traces, want one per ticket and one for the malformed one:\n%s", n, got)
	}
	for _, want := range []string{
		// A ticket: intake asks the classifier, whose reply is in the same trace.
		"    send triage.intake [producer]\n      process triage.intake [consumer] handled\n        send triage.classify [producer]\n          process triage.classify [consumer] handled\n            send agent.responses [producer]\n",
		// The duplicate refund command is dropped by its idempotency key.
		"process triage.resolve [consumer] dropped duplicate",
		// The retried refund.
		"process triage.resolve [consumer] (attempt 1 failed) handled",
		// The malformed ticket and its capsule.
		"process triage.intake [consumer] (attempt 1 failed) dead_lettered rejected\n        send agent.dlq [producer]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("trace tree lacks\n%s\ngot:\n%s", want, got)
		}
	}
}
