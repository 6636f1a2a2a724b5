package reliability_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/internal/fuzzcheck"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// The fuzz targets of the suite cover the decoders no package fuzzes on its
// own: the consumer's whole decode step (headers and payload together, as a
// record arrives) and the capsule types besides the dead letter. `make
// reliability` runs them with every other package's fuzz targets.

// FuzzDecodeRecord runs arbitrary header bytes and payloads through the
// consumer's decode step. The header bytes are what a hostile peer can put
// on the log (Iggy stores user headers unchecked), read as the Iggy
// transport reads them: wire.ParseHeaders, and a record that fails it goes
// on without headers. It must never panic; what it accepts must be
// consistent: an AGDX record yields a valid envelope that re-encodes to
// itself and binds the headers' signature context, a plain one yields
// provenance and no envelope.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range decodeRecordSeeds(f) {
		f.Add(s[0], s[1])
	}
	f.Add([]byte{}, []byte{})
	f.Fuzz(checkDecodeRecord)
}

// decodeRecordSeeds are an AGDX record and a plain one, header bytes and
// payload, as a producer of this module writes them.
func decodeRecordSeeds(tb testing.TB) [][2][]byte {
	conv := wire.IDFromUint128(7, 9)
	corr := wire.IDFromUint128(8, 9)
	env := &wire.Envelope{Kind: wire.KindCommand, Record: &corr, Conversation: conv, Source: "planner", Correlation: &corr, Body: []byte(`{}`)}
	payload, err := env.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	fence := uint64(3)
	prov := wire.Provenance{Conversation: conv, Agent: "planner", IdempotencyKey: "k", Fence: &fence}
	ph, err := prov.Headers()
	if err != nil {
		tb.Fatal(err)
	}
	return [][2][]byte{
		{wire.MustEncodeHeaders(wire.EnvelopeHeaders(env, wire.ContentJSON)).Bytes(), payload},
		{wire.MustEncodeHeaders(ph).Bytes(), []byte("plain body")},
	}
}

// checkDecodeRecord is FuzzDecodeRecord's harness.
func checkDecodeRecord(t *testing.T, headerBytes, payload []byte) {
	h, err := wire.ParseHeaders(headerBytes)
	if err != nil {
		h = wire.EncodedHeaders{}
	}
	rec := &runtime.Incoming{Headers: h, Payload: payload}
	m, err := runtime.DecodeRecord("t", rec, wire.FeaturesNone)
	if err != nil {
		if m != nil {
			t.Fatal("a failed decode returned a message")
		}
		return
	}
	_, agdx := rec.Headers.Get(wire.HeaderAgentVersion)
	if !agdx {
		if m.Envelope != nil {
			t.Fatal("a plain record decoded to an envelope")
		}
		if _, err := wire.DecodeProvenance(rec.Headers); err != nil {
			t.Fatalf("accepted provenance DecodeProvenance refuses: %v", err)
		}
		return
	}
	if m.Envelope == nil {
		t.Fatal("an AGDX record decoded without its envelope")
	}
	if err := wire.Validate(m.Envelope); err != nil {
		t.Fatalf("accepted an invalid envelope: %v", err)
	}
	if m.Provenance.Conversation != m.Envelope.Conversation {
		t.Fatal("synthesized provenance names another conversation")
	}
	canon, err := m.Envelope.Marshal()
	if err != nil {
		t.Fatalf("accepted envelope does not re-encode: %v", err)
	}
	if !bytes.Equal(canon, payload) {
		back, err := wire.DecodeEnvelope(canon)
		if err != nil || !cmp.Equal(back, m.Envelope) {
			t.Fatalf("accepted envelope does not round-trip (%v)", err)
		}
	}
	if _, err := sign.ObservedContext(rec.Headers); err != nil {
		t.Fatalf("accepted headers whose signature context does not read: %v", err)
	}
}

// capsule decoders, each with its re-encoder, for FuzzDecodeCapsules.
var capsuleCodecs = []struct {
	name   string
	decode func([]byte) (any, error)
	encode func(any) ([]byte, error)
}{
	{"dead letter", func(b []byte) (any, error) { return wire.DecodeDeadLetter(b) }, func(v any) ([]byte, error) { return v.(*wire.DeadLetter).Marshal() }},
	{"agent card", func(b []byte) (any, error) { return wire.DecodeAgentCard(b) }, func(v any) ([]byte, error) { return v.(*wire.AgentCard).Marshal() }},
	{"body ref", func(b []byte) (any, error) { return wire.DecodeBodyRef(b) }, func(v any) ([]byte, error) { return v.(*wire.BodyRef).Marshal() }},
	{"error body", func(b []byte) (any, error) { return wire.DecodeErrorBody(b) }, func(v any) ([]byte, error) { return v.(*wire.ErrorBody).Marshal() }},
	{"signature", func(b []byte) (any, error) { return wire.DecodeSignature(b) }, func(v any) ([]byte, error) { return v.(*wire.Signature).Marshal() }},
}

// FuzzDecodeCapsules feeds the same bytes to every capsule decoder: none
// may panic, failures must match wire.ErrDecode, and whatever decodes must
// re-encode to bytes that decode to an equal value.
func FuzzDecodeCapsules(f *testing.F) {
	for _, b := range capsuleSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(checkCapsules)
}

// capsuleSeeds are capsules as this module writes them, and two bare maps.
func capsuleSeeds(tb testing.TB) [][]byte {
	msg := "bad input"
	detail := "boom"
	var out [][]byte
	for _, v := range []interface{ Marshal() ([]byte, error) }{
		&wire.DeadLetter{Source: wire.LogPosition{StreamID: 1, TopicID: 2, PartitionID: 3, Offset: 4}, Reason: wire.ReasonRejected, Attempts: 2, Detail: &detail, Payload: []byte{0xa0}},
		&wire.ErrorBody{Code: wire.ErrorInvalidRequest, Message: &msg, Retryable: true},
		&wire.Signature{Scheme: wire.SignatureSchemeEd25519, KeyID: make([]byte, 8), Bytes: make([]byte, 64)},
	} {
		b, err := v.Marshal()
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	return append(out, []byte{0xa0}, []byte{0xbf, 0xff})
}

// checkCapsules is FuzzDecodeCapsules' harness.
func checkCapsules(t *testing.T, data []byte) {
	for _, c := range capsuleCodecs {
		v, err := c.decode(data)
		if err != nil {
			if !errors.Is(err, wire.ErrDecode) {
				t.Fatalf("%s: decode error %v does not match ErrDecode", c.name, err)
			}
			continue
		}
		canon, err := c.encode(v)
		if err != nil {
			t.Fatalf("%s: decoded value does not re-encode: %v", c.name, err)
		}
		back, err := c.decode(canon)
		if err != nil {
			t.Fatalf("%s: re-encoding does not decode: %v", c.name, err)
		}
		if diff := cmp.Diff(v, back); diff != "" {
			t.Fatalf("%s: decode(encode(v)) != v:\n%s", c.name, diff)
		}
	}
}

// TestFuzzHarnessesTakeAnyInput runs the harnesses of this file over
// fuzzcheck's hostile inputs as a plain test, so a harness that cannot
// fuzz (FuzzDecodeRecord once panicked on its first input, building
// headers with a Must encoder) fails every go test run.
func TestFuzzHarnessesTakeAnyInput(t *testing.T) {
	t.Run("FuzzDecodeRecord", func(t *testing.T) {
		seeds := decodeRecordSeeds(t)
		var flat [][]byte
		for _, s := range seeds {
			flat = append(flat, s[0], s[1])
		}
		pairs := append(seeds, fuzzcheck.Pairs(fuzzcheck.Inputs(1, flat...))...)
		for _, s := range seeds {
			for _, h := range fuzzcheck.Inputs(2, s[0]) {
				pairs = append(pairs, [2][]byte{h, s[1]})
			}
		}
		fuzzcheck.Run(t, pairs, func(t *testing.T, p [2][]byte) { checkDecodeRecord(t, p[0], p[1]) })
	})
	t.Run("FuzzDecodeCapsules", func(t *testing.T) {
		fuzzcheck.Run(t, fuzzcheck.Inputs(1, capsuleSeeds(t)...), checkCapsules)
	})
}
