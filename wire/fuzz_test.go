package wire_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/internal/fuzzcheck"
	"github.com/lasergo/laser/internal/vectors"
	"github.com/lasergo/laser/wire"
)

// seedFixtures returns the AGDX vectors; fuzz seeding is best effort
// (TestFixtures is what fails when they are missing).
func seedFixtures() [][]byte {
	paths, _ := vectors.AGDX.Lookup()
	var out [][]byte
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// wellformed is fxamacker's independent well-formedness check, with limits
// opened up so that only real malformation differs from our reader.
var wellformed = func() cbor.DecMode {
	dm, err := cbor.DecOptions{MaxNestedLevels: 65535, MaxArrayElements: 1 << 30, MaxMapPairs: 1 << 30}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

// checkEnvelopeBytes is the fuzz property: decoding never panics, fails
// only with ErrDecode, never accepts malformed CBOR, and whatever decodes
// re-encodes to canonical bytes that decode to an equal envelope.
func checkEnvelopeBytes(t *testing.T, data []byte) {
	env, err := wire.DecodeEnvelope(data)
	if err != nil {
		if !errors.Is(err, wire.ErrDecode) {
			t.Fatalf("decode error %v does not match ErrDecode", err)
		}
		return
	}
	if err := wellformed.Wellformed(data); err != nil {
		t.Fatalf("accepted input fxamacker finds malformed (%v): %x", err, data)
	}
	_ = wire.Validate(env)
	_ = env.UnmetRequirements(wire.FeaturesNone)
	_, _ = env.Fence()
	canon, err := env.Marshal()
	if err != nil {
		t.Fatalf("decoded envelope does not re-encode: %v", err)
	}
	back, err := wire.DecodeEnvelope(canon)
	if err != nil {
		t.Fatalf("re-encoding does not decode: %v\n%x", err, canon)
	}
	if diff := cmp.Diff(env, back); diff != "" {
		t.Fatalf("decode(encode(v)) != v (-first +second):\n%s", diff)
	}
	again, _ := back.Marshal()
	if !bytes.Equal(again, canon) {
		t.Fatalf("canonical encoding is not stable\n%x\n%x", canon, again)
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	for _, b := range seedFixtures() {
		f.Add(b)
	}
	for _, s := range []string{
		"a0", "f6", "",
		// undefined optionals, an indefinite map, a tagged body, a u8-array body
		"bf646b696e646576656e74656e6f7264" + "ff",
		"a4646b696e646576656e746c636f6e766572736174696f6e5000000000000000000000000000000000666f7572636561616464626f6479c24101",
	} {
		b, _ := hexDecode(s)
		f.Add(b)
	}
	f.Fuzz(checkEnvelopeBytes)
}

func FuzzDecodeDeadLetter(f *testing.F) {
	for _, b := range seedFixtures() {
		f.Add(b)
	}
	seed, _ := (&wire.DeadLetter{Source: wire.LogPosition{StreamID: 1, Offset: 9}, Reason: wire.ReasonDecodeFailed, Detail: new(string), Payload: []byte{0xa0}}).Marshal()
	f.Add(seed)
	f.Fuzz(checkDeadLetterBytes)
}

// checkDeadLetterBytes is FuzzDecodeDeadLetter's harness.
func checkDeadLetterBytes(t *testing.T, data []byte) {
	d, err := wire.DecodeDeadLetter(data)
	if err != nil {
		if !errors.Is(err, wire.ErrDecode) {
			t.Fatalf("decode error %v does not match ErrDecode", err)
		}
		return
	}
	if err := wellformed.Wellformed(data); err != nil {
		t.Fatalf("accepted malformed input (%v): %x", err, data)
	}
	canon, err := d.Marshal()
	if err != nil {
		t.Fatalf("decoded capsule does not re-encode: %v", err)
	}
	back, err := wire.DecodeDeadLetter(canon)
	if err != nil {
		t.Fatalf("re-encoding does not decode: %v", err)
	}
	if diff := cmp.Diff(d, back); diff != "" {
		t.Fatalf("decode(encode(v)) != v:\n%s", diff)
	}
}

// FuzzDecodeProvenance reads provenance from arbitrary header bytes, which
// a hostile peer can put on the log as they are (Iggy stores user headers
// unchecked): what ParseHeaders admits must decode without panicking, and
// what decodes and re-encodes must decode back to itself.
func FuzzDecodeProvenance(f *testing.F) {
	for _, b := range provenanceSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(checkProvenanceBytes)
}

// provenanceSeeds are encoded headers of full and minimal provenance and of
// an envelope.
func provenanceSeeds(tb testing.TB) [][]byte {
	var out [][]byte
	for _, prov := range []wire.Provenance{fullProvenance(), {Conversation: idConv}} {
		h, err := prov.Headers()
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, wire.MustEncodeHeaders(h).Bytes())
	}
	target := wire.AgentID("target-agent")
	return append(out, wire.MustEncodeHeaders(wire.EnvelopeHeaders(&wire.Envelope{Conversation: idConv, Target: &target}, wire.ContentJSON)).Bytes())
}

// checkProvenanceBytes is FuzzDecodeProvenance's harness.
func checkProvenanceBytes(t *testing.T, data []byte) {
	enc, err := wire.ParseHeaders(data)
	if err != nil {
		if !errors.Is(err, wire.ErrBadHeader) {
			t.Fatalf("ParseHeaders error %v does not match ErrBadHeader", err)
		}
		return // the transport hands such a record on without headers
	}
	prov, err := wire.DecodeProvenance(enc)
	if err != nil {
		return
	}
	h, err := prov.Headers()
	if err != nil {
		// Reading is lenient about values the writer refuses (say an
		// over-long agent); only encodable provenance must round-trip.
		if !errors.Is(err, wire.ErrProvenanceValue) && !errors.Is(err, wire.ErrProvenanceTooLarge) {
			t.Fatalf("unexpected encode error: %v", err)
		}
		return
	}
	back, err := wire.DecodeProvenance(wire.MustEncodeHeaders(h))
	if err != nil {
		t.Fatalf("re-encoded headers do not decode: %v", err)
	}
	if diff := cmp.Diff(prov, back); diff != "" {
		t.Fatalf("decode(encode(v)) != v:\n%s", diff)
	}
}

// TestFuzzHarnessesTakeAnyInput runs the dead-letter and provenance
// harnesses over fuzzcheck's hostile inputs as a plain test (the envelope
// harness has TestDecodersSurviveCorruption), so a harness that cannot
// fuzz fails every go test run.
func TestFuzzHarnessesTakeAnyInput(t *testing.T) {
	t.Run("FuzzDecodeDeadLetter", func(t *testing.T) {
		seed, err := (&wire.DeadLetter{Source: wire.LogPosition{StreamID: 1, Offset: 9}, Reason: wire.ReasonDecodeFailed, Payload: []byte{0xa0}}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		fuzzcheck.Run(t, fuzzcheck.Inputs(1, append(seedFixtures(), seed)...), checkDeadLetterBytes)
	})
	t.Run("FuzzDecodeProvenance", func(t *testing.T) {
		fuzzcheck.Run(t, fuzzcheck.Inputs(1, provenanceSeeds(t)...), checkProvenanceBytes)
	})
}

// TestDecodersSurviveCorruption mirrors the reference's robustness suite:
// every prefix and every byte corrupted three ways (low bit, high bit, all
// bits) of every fixture, plus random buffers, through every decoder; nothing
// may panic and accepted envelopes must round-trip.
func TestDecodersSurviveCorruption(t *testing.T) {
	decoders := []func([]byte) error{
		func(b []byte) error { _, err := wire.DecodeDeadLetter(b); return err },
		func(b []byte) error { _, err := wire.DecodeSignature(b); return err },
		func(b []byte) error { _, err := wire.DecodeErrorBody(b); return err },
		func(b []byte) error { _, err := wire.DecodeAgentCard(b); return err },
		func(b []byte) error { _, err := wire.DecodeBodyRef(b); return err },
		func(b []byte) error { var v wire.Value; return v.UnmarshalCBOR(b) },
		func(b []byte) error { var m wire.Metadata; return m.UnmarshalCBOR(b) },
	}
	run := func(b []byte) {
		checkEnvelopeBytes(t, b)
		for _, d := range decoders {
			_ = d(b)
		}
	}
	files := agdxFixtures(t)
	for _, name := range sortedNames(files) {
		b := files[name]
		for i := 0; i <= len(b); i++ {
			run(b[:i])
		}
		flipped := append([]byte{}, b...)
		for i := range flipped {
			for _, mask := range []byte{0x01, 0x80, 0xff} {
				flipped[i] ^= mask
				run(flipped)
				flipped[i] ^= mask
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 11))
	buf := make([]byte, 64)
	for i := 0; i < 10000; i++ {
		n := rng.IntN(len(buf))
		for j := range buf[:n] {
			buf[j] = byte(rng.Uint32())
		}
		run(buf[:n])
	}
}
