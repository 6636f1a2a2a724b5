package wire_test

import (
	"testing"

	"github.com/lasergo/laser/wire"
)

func commandFixture(b *testing.B) []byte {
	b.Helper()
	raw, ok := agdxFixtures(b)["agent_command.bin"]
	if !ok {
		b.Fatal("agent_command.bin is not in the fixture folder")
	}
	return raw
}

func BenchmarkEnvelopeDecode(b *testing.B) {
	raw := commandFixture(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodeEnvelope(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEnvelopeEncode(b *testing.B) {
	env, err := wire.DecodeEnvelope(commandFixture(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(commandFixture(b))))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := env.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEnvelopeAppendMarshal(b *testing.B) {
	env, err := wire.DecodeEnvelope(commandFixture(b))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = env.AppendMarshal(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEnvelopeValidate(b *testing.B) {
	env, err := wire.DecodeEnvelope(commandFixture(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := wire.Validate(env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeProvenance measures decoding the provenance headers of
// one plain message (conversation, sender, target, idempotency key, fence).
func BenchmarkDecodeProvenance(b *testing.B) {
	fence := uint64(1)
	prov := wire.Provenance{Conversation: wire.IDFromUint128(3, 42), Agent: "planner", Target: "worker",
		IdempotencyKey: "order-42", Fence: &fence}
	headers, err := prov.Headers()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodeProvenance(wire.MustEncodeHeaders(headers)); err != nil {
			b.Fatal(err)
		}
	}
}

// signedEnvelope is an envelope with every nested record the envelope
// table reads (usage, metadata, a signature with its context), as a signed
// and metered record travels.
func signedEnvelope(b *testing.B) []byte {
	b.Helper()
	rec, corr := wire.IDFromUint128(0, 1), wire.IDFromUint128(0, 2)
	target := wire.AgentID("worker")
	op := wire.OperationTask
	reasoning := uint64(5)
	env := &wire.Envelope{
		Kind: wire.KindCommand, Record: &rec, Conversation: wire.IDFromUint128(0, 3), Source: "planner",
		Target: &target, Correlation: &corr, Operation: &op,
		Usage:     &wire.TokenUsage{InputTokens: 100, OutputTokens: 20, ReasoningOutputTokens: &reasoning},
		Metadata:  wire.Metadata{{Key: wire.MetaFence, Value: wire.UintValue(7)}},
		Body:      []byte(`{"ask":"plan the trip"}`),
		Signature: &wire.Signature{Scheme: 1, KeyID: make([]byte, 8), Bytes: make([]byte, 64), Context: wire.NewSignatureContext(wire.ContentJSON, 1)},
	}
	raw, err := env.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

func BenchmarkEnvelopeDecodeSigned(b *testing.B) {
	raw := signedEnvelope(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodeEnvelope(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnvelopeBufferDecode is the runtime's decode: into a buffer
// reused across records.
func BenchmarkEnvelopeBufferDecode(b *testing.B) {
	raw := signedEnvelope(b)
	var buf wire.EnvelopeBuffer
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buf.Decode(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignatureDecode(b *testing.B) {
	raw, err := (&wire.Signature{Scheme: 1, KeyID: make([]byte, 8), Bytes: make([]byte, 64), Context: wire.NewSignatureContext(wire.ContentJSON, 1)}).Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodeSignature(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAgentCardDecode(b *testing.B) {
	cost, health := uint8(2), wire.HealthHealthy
	card := &wire.AgentCard{Name: "planner", Version: "1.4.0", Capabilities: []wire.CapabilityDescriptor{
		{SkillID: "plan", Input: wire.ContentByType(wire.ContentJSON), Output: wire.ContentBySchema("plan.v1"), CostClass: &cost, Health: &health},
		{SkillID: "replan", Input: wire.ContentByType(wire.ContentJSON)},
	}}
	raw, err := card.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodeAgentCard(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDeadLetterDecode(b *testing.B) {
	detail := "handler failed"
	raw, err := (&wire.DeadLetter{Source: wire.LogPosition{StreamID: 1, TopicID: 2, Offset: 9}, Reason: wire.ReasonRetryExhausted, Attempts: 3, Detail: &detail, Payload: make([]byte, 200)}).Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.DecodeDeadLetter(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseHeaders measures checking an enveloped record's headers.
func BenchmarkParseHeaders(b *testing.B) {
	env, err := wire.DecodeEnvelope(commandFixture(b))
	if err != nil {
		b.Fatal(err)
	}
	raw := wire.MustEncodeHeaders(wire.EnvelopeHeaders(env, wire.ContentJSON)).Bytes()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.ParseHeaders(raw); err != nil {
			b.Fatal(err)
		}
	}
}
