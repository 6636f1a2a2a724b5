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
