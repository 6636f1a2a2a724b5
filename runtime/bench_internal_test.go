package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/lasergo/laser/wire"
)

// nopTransport accepts publishes and serves nothing: enough to run the
// pipeline on its own.
type nopTransport struct{ Transport }

func (nopTransport) Publish(_ context.Context, _ string, recs ...Outgoing) ([]Position, error) {
	return make([]Position, len(recs)), nil
}

// pipelineDistinct is how many distinct records a pipeline benchmark cycles
// through: more than the dedup window holds, so every record is fresh.
const pipelineDistinct = 1 << 14

// benchPipeline runs records through the whole pipeline of a consumer with
// a no-op handler and default options, each iteration one record.
func benchPipeline(b *testing.B, recs []Incoming) {
	c, err := NewConsumer(nopTransport{}, ConsumerConfig{
		Topic:   "agent.commands",
		Group:   "worker",
		Agent:   "worker",
		Handler: HandlerFunc(func(*Ctx) error { return nil }),
		Client:  NewClient(nopTransport{}, ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var slab messageSlab // as the consumer's loops decode
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		// By the time a record comes round again the 10,000-key dedup window
		// has forgotten it, and its equal fence is accepted, so every
		// iteration takes the full path to the handler.
		rec := &recs[i%len(recs)]
		if i%len(recs) == 0 {
			slab.reset(len(recs)) // one batch per pass over recs
		}
		if o, err := c.process(ctx, rec, c.decode(&slab, rec)); err != nil || o != handled {
			b.Fatalf("outcome %v err %v", o, err)
		}
	}
}

// BenchmarkPipelineAGDXCommand measures one AGDX command through the whole
// pipeline (decode, validate, target filter, fence, dedup, deadline,
// middleware-free dispatch) to a no-op handler.
func BenchmarkPipelineAGDXCommand(b *testing.B) {
	// Distinct idempotency keys so every message passes dedup, which keeps
	// the window churning at its full size like a busy consumer's.
	recs := make([]Incoming, pipelineDistinct)
	for i := range recs {
		rec, corr := wire.IDFromUint128(1, uint64(i)), wire.IDFromUint128(2, uint64(i))
		key := wire.IdempotencyKey(fmt.Sprintf("order-%d", i))
		env := &wire.Envelope{
			Kind: wire.KindCommand, Record: &rec, Conversation: wire.IDFromUint128(3, uint64(i)),
			Source: "planner", Target: ptr(wire.AgentID("worker")), Correlation: &corr, IdempotencyKey: &key,
			Operation: ptr("charge"), Metadata: wire.Metadata{{Key: wire.HeaderFence, Value: wire.UintValue(1)}},
			Body: []byte(`{"amount":"9.99","currency":"EUR"}`),
		}
		payload, err := env.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		recs[i] = Incoming{Position: Position{Offset: uint64(i)}, Headers: wire.MustEncodeHeaders(wire.EnvelopeHeaders(env, wire.ContentJSON)), Payload: payload}
	}
	benchPipeline(b, recs)
}

// BenchmarkPipelinePlainMessage measures one plain message (provenance
// headers: conversation, sender, target, idempotency key and fence)
// through the same pipeline.
func BenchmarkPipelinePlainMessage(b *testing.B) {
	recs := make([]Incoming, pipelineDistinct)
	for i := range recs {
		fence := uint64(1)
		prov := wire.Provenance{Conversation: wire.IDFromUint128(3, uint64(i)), Agent: "planner", Target: "worker",
			IdempotencyKey: fmt.Sprintf("order-%d", i), Fence: &fence}
		headers, err := prov.Headers()
		if err != nil {
			b.Fatal(err)
		}
		recs[i] = Incoming{Position: Position{Offset: uint64(i)}, Headers: wire.MustEncodeHeaders(headers), Payload: []byte(`{"amount":"9.99","currency":"EUR"}`)}
	}
	benchPipeline(b, recs)
}

func ptr[T any](v T) *T { return &v }

// BenchmarkDecodeRecordPlain measures decoding one plain record (provenance
// headers read in place, the message taken from a slab), the first stage
// of the pipeline.
func BenchmarkDecodeRecordPlain(b *testing.B) {
	prov := wire.Provenance{Conversation: wire.IDFromUint128(3, 1), Agent: "bench", IdempotencyKey: "k-1"}
	headers, err := prov.Headers()
	if err != nil {
		b.Fatal(err)
	}
	rec := Incoming{Headers: wire.MustEncodeHeaders(headers), Payload: make([]byte, 256)}
	var slab messageSlab
	b.ReportAllocs()
	for b.Loop() {
		slab.reset(1)
		if _, err := slab.decode("t", &rec, 0); err != nil {
			b.Fatal(err)
		}
	}
}
