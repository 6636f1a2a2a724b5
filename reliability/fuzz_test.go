package reliability_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// The fuzz targets of the suite cover the decoders no package fuzzes on its
// own: the consumer's whole decode step (headers and payload together, as a
// record arrives) and the capsule types besides the dead letter. `make
// reliability` runs them with every other package's fuzz targets.

// recordKeys are the header names the record fuzzer draws from.
var recordKeys = []string{
	wire.HeaderAgentVersion, wire.HeaderContentType, wire.HeaderConversationID, wire.HeaderTarget,
	wire.HeaderAgentID, wire.HeaderIdempotencyKey, wire.HeaderCorrelationID, wire.HeaderFence,
	wire.HeaderDeadline, wire.HeaderCausalParent, wire.HeaderCost, "x-other",
}

// fuzzHeaders reads records of [key selector][kind][length][value...].
func fuzzHeaders(data []byte) wire.Headers {
	var h wire.Headers
	for len(data) >= 3 {
		key := recordKeys[int(data[0])%len(recordKeys)]
		kind := wire.HeaderKind(data[1] % 16)
		n := min(int(data[2]), len(data)-3)
		h = append(h, wire.Header{Key: key, Value: wire.HeaderValue{Kind: kind, Data: data[3 : 3+n]}})
		data = data[3+n:]
	}
	return h
}

func toFuzzHeaders(h wire.Headers) []byte {
	var out []byte
	for _, e := range h {
		sel := len(recordKeys) - 1
		for i, k := range recordKeys {
			if k == e.Key {
				sel = i
			}
		}
		out = append(out, byte(sel), byte(e.Value.Kind), byte(len(e.Value.Data)))
		out = append(out, e.Value.Data...)
	}
	return out
}

// FuzzDecodeRecord runs arbitrary headers and payloads through the
// consumer's decode step. It must never panic; what it accepts must be
// consistent: an AGDX record yields a valid envelope that re-encodes to
// itself and binds the headers' signature context, a plain one yields
// provenance and no envelope.
func FuzzDecodeRecord(f *testing.F) {
	conv := wire.IDFromUint128(7, 9)
	corr := wire.IDFromUint128(8, 9)
	env := &wire.Envelope{Kind: wire.KindCommand, Record: &corr, Conversation: conv, Source: "planner", Correlation: &corr, Body: []byte(`{}`)}
	payload, err := env.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(toFuzzHeaders(wire.EnvelopeHeaders(env, wire.ContentJSON)), payload)
	fence := uint64(3)
	prov := wire.Provenance{Conversation: conv, Agent: "planner", IdempotencyKey: "k", Fence: &fence}
	ph, err := prov.Headers()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(toFuzzHeaders(ph), []byte("plain body"))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, headerBytes, payload []byte) {
		rec := &runtime.Incoming{Headers: wire.MustEncodeHeaders(fuzzHeaders(headerBytes)), Payload: payload}
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
	})
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
	msg := "bad input"
	detail := "boom"
	for _, v := range []interface{ Marshal() ([]byte, error) }{
		&wire.DeadLetter{Source: wire.LogPosition{StreamID: 1, TopicID: 2, PartitionID: 3, Offset: 4}, Reason: wire.ReasonRejected, Attempts: 2, Detail: &detail, Payload: []byte{0xa0}},
		&wire.ErrorBody{Code: wire.ErrorInvalidRequest, Message: &msg, Retryable: true},
		&wire.Signature{Scheme: wire.SignatureSchemeEd25519, KeyID: make([]byte, 8), Bytes: make([]byte, 64)},
	} {
		b, err := v.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xa0})
	f.Add([]byte{0xbf, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
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
	})
}
