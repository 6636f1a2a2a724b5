package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/lasergo/laser/otellaser"
)

// printTraceTree prints spans as one tree per trace: each span under its
// parent, in start order, with its kind and, for a consumer span, how the
// message ended.
func printTraceTree(w io.Writer, spans []sdktrace.ReadOnlySpan) {
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	known := map[trace.SpanID]bool{}
	for _, s := range spans {
		known[s.SpanContext().SpanID()] = true
	}
	var roots []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if p := s.Parent(); p.IsValid() && known[p.SpanID()] {
			children[p.SpanID()] = append(children[p.SpanID()], s)
		} else {
			roots = append(roots, s)
		}
	}
	byStart := func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) }
	slices.SortFunc(roots, byStart)
	fmt.Fprintf(w, "\ntraces (%d spans)\n", len(spans))
	var walk func(s sdktrace.ReadOnlySpan, depth int)
	walk = func(s sdktrace.ReadOnlySpan, depth int) {
		fmt.Fprintf(w, "%s%s [%s]%s\n", strings.Repeat("  ", depth+1), s.Name(), s.SpanKind(), outcome(s))
		kids := children[s.SpanContext().SpanID()]
		slices.SortFunc(kids, byStart)
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		fmt.Fprintf(w, "  trace %s\n", r.SpanContext().TraceID())
		walk(r, 1)
	}
}

// outcome renders a consumer span's laser.outcome event: " handled", " dead_lettered rejected", ...
func outcome(s sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	for _, e := range s.Events() {
		switch e.Name {
		case "laser.attempt":
			b.WriteString(" (attempt " + value(e.Attributes, otellaser.AttemptsKey) + " failed)")
		case "laser.outcome":
			b.WriteString(" " + value(e.Attributes, otellaser.ResultKey))
			for _, k := range []attribute.Key{otellaser.ReasonKey, otellaser.GateKey} {
				if v := value(e.Attributes, k); v != "" {
					b.WriteString(" " + v)
				}
			}
		}
	}
	return b.String()
}

func value(attrs []attribute.KeyValue, key attribute.Key) string {
	for _, kv := range attrs {
		if kv.Key == key {
			return kv.Value.String()
		}
	}
	return ""
}
