package e2eagent

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lasergo/laser/gen/internal/e2eagent/billingapi"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// discardTransport accepts every publish and stores nothing, so the
// benchmarks measure dispatch (decode, route, call, encode, build the
// reply) rather than the log.
type discardTransport struct {
	runtime.Transport
	pos []runtime.Position
}

func (d *discardTransport) Publish(_ context.Context, _ string, records ...runtime.Outgoing) ([]runtime.Position, error) {
	return d.pos[:len(records)], nil
}

// reflectRouter is the hand-written alternative: a map from operation to
// method, inputs built and methods called by reflection, bodies in JSON.
type reflectRouter struct {
	impl    reflect.Value
	methods map[string]reflect.Method
}

func newReflectRouter(impl any, ops map[string]string) *reflectRouter {
	r := &reflectRouter{impl: reflect.ValueOf(impl), methods: make(map[string]reflect.Method, len(ops))}
	t := reflect.TypeOf(impl)
	for op, name := range ops {
		m, ok := t.MethodByName(name)
		if !ok {
			panic("no method " + name)
		}
		r.methods[op] = m
	}
	return r
}

func (r *reflectRouter) Handle(c *runtime.Ctx) error {
	m := c.Message()
	meth, ok := r.methods[m.Operation()]
	if !ok {
		return c.RejectUnknownOperation("billing")
	}
	inType := meth.Type.In(2)
	var arg reflect.Value
	if inType.Kind() == reflect.Pointer {
		arg = reflect.New(inType.Elem())
		if err := json.Unmarshal(m.Body(), arg.Interface()); err != nil {
			return runtime.Reject(err)
		}
	} else {
		p := reflect.New(inType)
		if err := json.Unmarshal(m.Body(), p.Interface()); err != nil {
			return runtime.Reject(err)
		}
		arg = p.Elem()
	}
	outs := meth.Func.Call([]reflect.Value{r.impl, reflect.ValueOf(c), arg})
	if err, _ := outs[len(outs)-1].Interface().(error); err != nil {
		return err
	}
	if len(outs) == 1 {
		return nil
	}
	body, err := json.Marshal(outs[0].Interface())
	if err != nil {
		return runtime.Reject(err)
	}
	return c.Respond(body, runtime.WithContentType(wire.ContentJSON))
}

// benchCtx returns a handler context for one AGDX command carrying op and
// body, answering through a transport that discards.
func benchCtx(b *testing.B, op string, ct wire.ContentType, body []byte) *runtime.Ctx {
	b.Helper()
	client := runtime.NewClient(&discardTransport{pos: make([]runtime.Position, 1)}, runtime.ClientConfig{})
	b.Cleanup(func() { client.Close() })
	corr := client.IDs().NewID()
	conv := client.IDs().NewID()
	m := &runtime.Message{
		Topic: "billing.commands",
		Envelope: &wire.Envelope{
			Kind: wire.KindCommand, Conversation: conv, Source: caller, Correlation: &corr,
			Operation: &op, Body: body,
		},
		ContentType:    ct,
		HasContentType: true,
		Provenance:     wire.Provenance{Conversation: conv, Agent: caller, Correlation: corr.String()},
	}
	return lasertest.NewCtx(context.Background(), client, m, "billing", "billing.responses")
}

func runDispatch(b *testing.B, h runtime.Handler, c *runtime.Ctx) {
	if err := h.Handle(c); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := h.Handle(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDispatch compares, per message, the generated dispatcher with a
// hand-written encoding/json handler that routes by reflection. The request
// cases decode, route, call, encode and build the reply (publishing to a
// transport that discards); the command cases decode, route and call only.
// generated/cbor/* are the generated paths in CBOR.
func BenchmarkDispatch(b *testing.B) {
	jsonBody, err := json.Marshal(QuoteRequest{Cents: 5000})
	if err != nil {
		b.Fatal(err)
	}
	cborBody, err := runtime.EncodeBody(ChargeCard{Card: "4242", Cents: 1250}, wire.ContentCBOR)
	if err != nil {
		b.Fatal(err)
	}
	noteBody, err := json.Marshal(billingapi.Refund{Charge: "ch-1", Cents: 300})
	if err != nil {
		b.Fatal(err)
	}
	impl := NewBilling()
	generated := BillingHandler(impl)
	reflected := newReflectRouter(impl, map[string]string{"quote": "Quote", "charge": "Charge", "note": "Note"})
	b.Run("generated/json/request", func(b *testing.B) {
		runDispatch(b, generated, benchCtx(b, "quote", wire.ContentJSON, jsonBody))
	})
	b.Run("reflect/json/request", func(b *testing.B) {
		runDispatch(b, reflected, benchCtx(b, "quote", wire.ContentJSON, jsonBody))
	})
	b.Run("generated/json/command", func(b *testing.B) {
		runDispatch(b, generated, benchCtx(b, "note", wire.ContentJSON, noteBody))
	})
	b.Run("reflect/json/command", func(b *testing.B) {
		runDispatch(b, reflected, benchCtx(b, "note", wire.ContentJSON, noteBody))
	})
	b.Run("generated/cbor/request", func(b *testing.B) {
		runDispatch(b, generated, benchCtx(b, "charge", wire.ContentCBOR, cborBody))
	})
}
