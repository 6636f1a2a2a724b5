package otellaser_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// victim is the trace context a forged record claims: a sampled span with
// vendor state.
const (
	victimTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	victimSpan   = "00f067aa0ba902b7"
	victimHeader = "00-" + victimTrace + "-" + victimSpan + "-01"
)

// publishTraced appends env with a traceparent and tracestate header.
func publishTraced(t *testing.T, tr runtime.Transport, topic string, env *wire.Envelope) {
	t.Helper()
	payload, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	headers := wire.EnvelopeHeaders(env, wire.ContentRaw)
	headers.Set("traceparent", wire.StringValue(victimHeader))
	headers.Set("tracestate", wire.StringValue("vendor=forged"))
	if _, err := tr.Publish(context.Background(), topic, runtime.Outgoing{Key: "k", Headers: headers, Payload: payload}); err != nil {
		t.Fatal(err)
	}
}

// A record the signature gate refuses starts a new trace, linked to the
// context it claimed without that context's tracestate; a verified one
// still continues its sender's trace.
func TestAnUnverifiedRecordStartsANewRootLinkedToWhatItClaims(t *testing.T) {
	r := newRig(t, "ledger.commands")
	shop := sign.NewKey([32]byte{9})
	reg := sign.NewRegistry()
	if err := reg.Enroll("shop", shop.Public()); err != nil {
		t.Fatal(err)
	}
	r.agent(r.process(nil), "ledger", "ledger.commands", runtime.AgentConfig{Verifier: reg}, func(*runtime.Ctx) error { return nil })

	rec, corr := wire.IDFromUint128(0xf0, 1), wire.IDFromUint128(0xf0, 2)
	forged := &wire.Envelope{Kind: wire.KindCommand, Record: &rec, Conversation: rec, Source: "shop", Correlation: &corr, Body: []byte("forged")}
	publishTraced(t, r.log, "ledger.commands", forged)
	spans := r.ended("process ledger.commands", 1)
	span := named(spans, "process ledger.commands")[0]
	if span.SpanContext().TraceID().String() == victimTrace || span.Parent().IsValid() {
		t.Fatalf("the forged record joined the claimed trace: trace %s, parent %v", span.SpanContext().TraceID(), span.Parent())
	}
	if links := span.Links(); len(links) != 1 || links[0].SpanContext.TraceID().String() != victimTrace || links[0].SpanContext.TraceState().Len() != 0 {
		t.Fatalf("links %+v, want one to the claimed context without its tracestate", links)
	}
	if span.SpanContext().TraceState().Len() != 0 {
		t.Fatalf("the forged tracestate was carried on: %s", span.SpanContext().TraceState())
	}

	rec2, corr2 := wire.IDFromUint128(0xf0, 3), wire.IDFromUint128(0xf0, 4)
	genuine := &wire.Envelope{Kind: wire.KindCommand, Record: &rec2, Conversation: rec2, Source: "shop", Correlation: &corr2, Body: []byte("genuine")}
	sign.Bind(genuine, "ledger.commands", uint64(time.Now().UnixMicro()))
	code, av := uint8(wire.ContentRaw), wire.AgentOpVersion
	if err := shop.Sign(genuine, &wire.SignatureContext{ContentType: &code, AgentVersion: &av}); err != nil {
		t.Fatal(err)
	}
	publishTraced(t, r.log, "ledger.commands", genuine)
	spans = r.ended("process ledger.commands", 2)
	var child trace.SpanContext
	for _, s := range named(spans, "process ledger.commands") {
		if s.Parent().IsValid() {
			child = s.Parent()
		}
	}
	if child.TraceID().String() != victimTrace || child.SpanID().String() != victimSpan {
		t.Fatalf("the verified record's span is not the child of its sender's: parent %v", child)
	}
}
