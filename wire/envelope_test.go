package wire_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/wire"
)

// cborMap builds a CBOR map with the pairs in the given order, encoding each
// key and value with fxamacker (cbor.RawMessage values go in verbatim), so
// test inputs do not depend on the encoder under test.
func cborMap(t testing.TB, pairs ...any) []byte {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatal("cborMap needs key/value pairs")
	}
	out := []byte{0xb8, byte(len(pairs) / 2)}
	for _, p := range pairs {
		if raw, ok := p.(cbor.RawMessage); ok {
			out = append(out, raw...)
			continue
		}
		b, err := cbor.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b...)
	}
	return out
}

var (
	idRecord = wire.IDFromUint128(0x01903c1faa000000, 1)
	idConv   = wire.IDFromUint128(0x01903c1faa000000, 2)
	idCorr   = wire.IDFromUint128(0x01903c1faa000000, 5)
	idChan   = wire.IDFromUint128(0x01903c1faa000000, 6)
)

// eventPairs is a minimal valid event in wire order.
func eventPairs() []any {
	return []any{"kind", "event", "record", idRecord[:], "conversation", idConv[:], "source", "source-agent", "body", []byte("x")}
}

func with(pairs []any, more ...any) []any { return append(append([]any{}, pairs...), more...) }

func TestDecodeEnvelopeMinimalEvent(t *testing.T) {
	env, err := wire.DecodeEnvelope(cborMap(t, eventPairs()...))
	if err != nil {
		t.Fatal(err)
	}
	rec := idRecord
	want := &wire.Envelope{Kind: wire.KindEvent, Record: &rec, Conversation: idConv, Source: "source-agent", Body: []byte("x")}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestDecodeEnvelopeIgnoresInputFieldOrder(t *testing.T) {
	p := eventPairs()
	var reversed []any
	for i := len(p) - 2; i >= 0; i -= 2 {
		reversed = append(reversed, p[i], p[i+1])
	}
	canonical := cborMap(t, p...)
	env, err := wire.DecodeEnvelope(cborMap(t, reversed...))
	if err != nil {
		t.Fatal(err)
	}
	got, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// cborMap writes a one-byte-count head; the canonical form uses the short head.
	if want := append([]byte{0xa5}, canonical[2:]...); !bytes.Equal(got, want) {
		t.Fatalf("re-encoding is not in declaration order\n got %x\nwant %x", got, want)
	}
}

func TestDecodeEnvelopeNullAndUndefinedAreAbsent(t *testing.T) {
	b := cborMap(t, with(eventPairs(), "target", nil, "correlation", cbor.RawMessage{0xf7}, "metadata", nil, "signature", nil, "usage", nil)...)
	env, err := wire.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if env.Target != nil || env.Correlation != nil || env.Metadata != nil || env.Signature != nil || env.Usage != nil {
		t.Fatalf("null optionals decoded as present: %+v", env)
	}
}

func TestDecodeEnvelopeSkipsUnknownFields(t *testing.T) {
	b := cborMap(t, with(eventPairs(), "future_field", map[string]any{"nested": []any{1, "two", []byte{3}}})...)
	env, err := wire.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := env.Marshal()
	if bytes.Contains(got, []byte("future_field")) {
		t.Fatal("an unknown field survived re-encoding")
	}
}

func TestDecodeEnvelopeAcceptsBodyAsU8Array(t *testing.T) {
	p := eventPairs()
	b, err := cbor.Marshal([]int{'h', 'i'})
	if err != nil {
		t.Fatal(err)
	}
	p[len(p)-1] = cbor.RawMessage(b)
	env, err := wire.DecodeEnvelope(cborMap(t, p...))
	if err != nil || string(env.Body) != "hi" {
		t.Fatalf("body = %q, %v", env.Body, err)
	}
}

func TestDecodeEnvelopeAcceptsAgentIDs(t *testing.T) {
	for _, id := range []string{"planner", "planner@acme.example", "team/planner", "a:b", strings.Repeat("x", 256), "agent-é-🚀"} {
		p := eventPairs()
		p[7] = id
		env, err := wire.DecodeEnvelope(cborMap(t, p...))
		if err != nil || string(env.Source) != id {
			t.Errorf("source %q: %v", id, err)
		}
	}
}

func TestDecodeEnvelopeRejects(t *testing.T) {
	replace := func(key string, v any) []byte {
		p := eventPairs()
		for i := 0; i < len(p); i += 2 {
			if p[i] == key {
				p[i+1] = v
			}
		}
		return cborMap(t, p...)
	}
	drop := func(key string) []byte {
		var p []any
		for i, e := 0, eventPairs(); i < len(e); i += 2 {
			if e[i] != key {
				p = append(p, e[i], e[i+1])
			}
		}
		return cborMap(t, p...)
	}
	canonical, err := (&wire.Envelope{Kind: wire.KindEvent, Conversation: idConv, Source: "s", Body: []byte("x")}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		is   error
	}{
		{"unknown kind", replace("kind", "telemetry"), wire.ErrUnknownKind},
		{"kind as bytes", replace("kind", []byte("event")), wire.ErrMalformed},
		{"missing kind", drop("kind"), wire.ErrMissingField},
		{"missing conversation", drop("conversation"), wire.ErrMissingField},
		{"missing source", drop("source"), wire.ErrMissingField},
		{"empty source", replace("source", ""), wire.ErrBadAgentID},
		{"C0 control in source", replace("source", "a\nb"), wire.ErrBadAgentID},
		{"DEL in source", replace("source", "a\x7fb"), wire.ErrBadAgentID},
		{"C1 control in source", replace("source", "a\u0085b"), wire.ErrBadAgentID},
		{"257-byte source", replace("source", strings.Repeat("x", 257)), wire.ErrBadAgentID},
		{"bad target", cborMap(t, with(eventPairs(), "target", "")...), wire.ErrBadAgentID},
		{"65-byte idempotency key", cborMap(t, with(eventPairs(), "idempotency_key", strings.Repeat("k", 65))...), wire.ErrBadIdempotencyKey},
		{"empty idempotency key", cborMap(t, with(eventPairs(), "idempotency_key", "")...), wire.ErrBadIdempotencyKey},
		{"15-byte record", replace("record", make([]byte, 15)), wire.ErrMalformed},
		{"record as u8 array", replace("record", make([]int, 16)), wire.ErrMalformed},
		{"19-byte cause_at", cborMap(t, with(eventPairs(), "cause_at", make([]byte, 19))...), wire.ErrMalformed},
		{"duplicate kind", cborMap(t, with(eventPairs(), "kind", "event")...), wire.ErrDuplicateKey},
		{"integer key", cborMap(t, with(eventPairs(), 7, 1)...), wire.ErrMalformed},
		{"trailing byte", append(append([]byte{}, canonical...), 0x00), wire.ErrTrailingBytes},
		{"task_state over u8", cborMap(t, with(eventPairs(), "task_state", 256)...), wire.ErrMalformed},
		{"negative sequence", cborMap(t, with(eventPairs(), "sequence", -1)...), wire.ErrMalformed},
		{"null last", cborMap(t, with(eventPairs(), "last", nil)...), wire.ErrMalformed},
		{"null body", replace("body", nil), wire.ErrMalformed},
		{"text body", replace("body", "x"), wire.ErrMalformed},
		{"metadata map value", cborMap(t, with(eventPairs(), "metadata", map[string]any{"k": map[string]any{}})...), wire.ErrBadValue},
		{"metadata bytes value not UTF-8", cborMap(t, with(eventPairs(), "metadata", map[string]any{"k": []byte{0xff}})...), wire.ErrBadValue},
		{"metadata tagged value", cborMap(t, with(eventPairs(), "metadata", map[string]cbor.RawMessage{"k": {0xc1, 0x05}})...), wire.ErrBadValue},
		{"metadata int below int64", cborMap(t, with(eventPairs(), "metadata", map[string]cbor.RawMessage{"k": {0x3b, 0x80, 0, 0, 0, 0, 0, 0, 0}})...), wire.ErrBadValue},
		{"metadata duplicate key", cborMap(t, with(eventPairs(), "metadata", cbor.RawMessage{0xa2, 0x61, 'k', 0x01, 0x61, 'k', 0x02})...), wire.ErrDuplicateKey},
		{"array at top level", []byte{0x80}, wire.ErrMalformed},
		{"empty input", nil, wire.ErrMalformed},
		{"truncated", canonical[:len(canonical)-1], wire.ErrMalformed},
	} {
		env, err := wire.DecodeEnvelope(tc.in)
		if err == nil {
			t.Errorf("%s: decoded %+v", tc.name, env)
			continue
		}
		if !errors.Is(err, wire.ErrDecode) || !errors.Is(err, tc.is) {
			t.Errorf("%s: error %v does not match ErrDecode and %v", tc.name, err, tc.is)
		}
	}
}

func TestDecodeErrorNamesFieldAndOffset(t *testing.T) {
	p := eventPairs()
	p[7] = ""
	_, err := wire.DecodeEnvelope(cborMap(t, p...))
	var de *wire.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %T is not a *DecodeError", err)
	}
	if de.Type != "envelope" || de.Field != "source" || de.Offset == 0 {
		t.Fatalf("DecodeError = %+v", de)
	}
	if msg := err.Error(); !strings.Contains(msg, `field "source"`) || !strings.Contains(msg, "invalid agent id") {
		t.Fatalf("message %q does not name the field and cause", msg)
	}
}

func TestDecodeEnvelopeDoesNotAliasInput(t *testing.T) {
	in := cborMap(t, with(eventPairs(), "metadata", map[string]string{"role": "user"})...)
	env, err := wire.DecodeEnvelope(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 0
	}
	if string(env.Body) != "x" || env.Source != "source-agent" {
		t.Fatalf("decoded fields changed with the input: %+v", env)
	}
	if v, _ := env.Metadata.Get("role").AsStr(); v != "user" {
		t.Fatalf("metadata changed with the input: %v", env.Metadata)
	}
}

func TestEnvelopeOmitsDefaultFields(t *testing.T) {
	env := &wire.Envelope{Kind: wire.KindStatus, Conversation: idConv, Source: "s", Body: []byte{}}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0xa3 {
		t.Fatalf("map head = %#x, want 3 entries (kind, conversation, source): %x", b[0], b)
	}
	for _, key := range []string{"last", "must_understand", "body", "metadata"} {
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("default-valued %s was written", key)
		}
	}
}

func TestMetadataEncodesKeysBytewiseSorted(t *testing.T) {
	m := wire.Metadata{{Key: "b", Value: wire.IntValue(1)}, {Key: "a", Value: wire.IntValue(2)}, {Key: "aa", Value: wire.IntValue(3)}, {Key: "B", Value: wire.IntValue(4)}, {Key: "é", Value: wire.IntValue(5)}}
	got, err := m.MarshalCBOR()
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0xa5, 0x61, 'B', 0x04, 0x61, 'a', 0x02, 0x62, 'a', 'a', 0x03, 0x61, 'b', 0x01, 0x62, 0xc3, 0xa9, 0x05}
	if !bytes.Equal(got, want) {
		t.Fatalf("metadata = %x, want %x", got, want)
	}
}

func TestMetadataEmptyDiffersFromAbsent(t *testing.T) {
	env := &wire.Envelope{Kind: wire.KindEvent, Conversation: idConv, Source: "s", Metadata: wire.Metadata{}}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("metadata\xa0")) {
		t.Fatalf("empty metadata not written as an empty map: %x", b)
	}
	back, err := wire.DecodeEnvelope(b)
	if err != nil || back.Metadata == nil || len(back.Metadata) != 0 {
		t.Fatalf("decoded metadata = %#v, %v", back.Metadata, err)
	}
}

func TestValueDecodesInReferenceVariantOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    []byte
		want  wire.Value
		canon []byte // re-encoding when it differs from in
	}{
		{"small uint is Int", []byte{0x05}, wire.IntValue(5), nil},
		{"MaxInt64 is Int", []byte{0x1b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, wire.IntValue(1<<63 - 1), nil},
		{"above MaxInt64 is Uint", []byte{0x1b, 0x80, 0, 0, 0, 0, 0, 0, 0}, wire.UintValue(1 << 63), nil},
		{"negative is Int", []byte{0x20}, wire.IntValue(-1), nil},
		{"MinInt64", []byte{0x3b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, wire.IntValue(-1 << 63), nil},
		{"integral float stays Float", []byte{0xf9, 0x3c, 0x00}, wire.FloatValue(1), nil},
		{"f64 that fits f16 narrows", []byte{0xfb, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0}, wire.FloatValue(0.5), []byte{0xf9, 0x38, 0x00}},
		{"text", []byte{0x62, 'h', 'i'}, wire.StrValue("hi"), nil},
		{"bool", []byte{0xf5}, wire.BoolValue(true), nil},
		{"null", []byte{0xf6}, wire.NullValue(), nil},
		{"undefined is Null", []byte{0xf7}, wire.NullValue(), []byte{0xf6}},
		{"list", []byte{0x83, 0x01, 0x61, 'a', 0x80}, wire.ListValue(wire.IntValue(1), wire.StrValue("a"), wire.ListValue()), nil},
		{"UTF-8 bytes are Str", []byte{0x42, 'h', 'i'}, wire.StrValue("hi"), []byte{0x62, 'h', 'i'}},
	} {
		var v wire.Value
		if err := v.UnmarshalCBOR(tc.in); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !v.Equal(tc.want) {
			t.Errorf("%s: decoded %s (%s), want %s (%s)", tc.name, v, v.Kind(), tc.want, tc.want.Kind())
		}
		want := tc.canon
		if want == nil {
			want = tc.in
		}
		if got, err := v.MarshalCBOR(); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: re-encoded %x, %v; want %x", tc.name, got, err, want)
		}
	}
}

func TestValueAccessors(t *testing.T) {
	if v, ok := wire.IntValue(5).AsUint(); !ok || v != 5 {
		t.Error("AsUint(Int 5)")
	}
	if _, ok := wire.IntValue(-1).AsUint(); ok {
		t.Error("AsUint(Int -1) succeeded")
	}
	if _, ok := wire.UintValue(1 << 63).AsInt(); ok {
		t.Error("AsInt(Uint 2^63) succeeded")
	}
	if v, ok := wire.UintValue(7).AsInt(); !ok || v != 7 {
		t.Error("AsInt(Uint 7)")
	}
	if _, ok := wire.StrValue("7").AsUint(); ok {
		t.Error("AsUint(Str) succeeded")
	}
	if s, ok := wire.StrValue("x").AsStr(); !ok || s != "x" {
		t.Error("AsStr")
	}
	if f, ok := wire.FloatValue(0.5).AsFloat(); !ok || f != 0.5 {
		t.Error("AsFloat")
	}
	if b, ok := wire.BoolValue(true).AsBool(); !ok || !b {
		t.Error("AsBool")
	}
	if l, ok := wire.ListValue(wire.NullValue()).AsList(); !ok || len(l) != 1 || !l[0].IsNull() {
		t.Error("AsList")
	}
	if !(wire.Value{}).IsNull() {
		t.Error("the zero Value is not Null")
	}
}

func TestValueEqualComparesFloatBits(t *testing.T) {
	nan := wire.FloatValue(float64FromBits(0x7ff8_0000_0000_0000))
	if !nan.Equal(nan) {
		t.Error("NaN is not equal to itself")
	}
	if wire.FloatValue(0).Equal(wire.FloatValue(float64FromBits(1 << 63))) {
		t.Error("0 equals -0")
	}
	if wire.IntValue(1).Equal(wire.UintValue(1)) {
		t.Error("Int 1 equals Uint 1")
	}
}

func TestEnvelopeMarshalRejectsUndecodableFields(t *testing.T) {
	bad := "bad\xff"
	longKey := wire.IdempotencyKey(strings.Repeat("k", 65))
	emptyTarget := wire.AgentID("")
	for name, env := range map[string]*wire.Envelope{
		"unknown kind":       {Kind: "telemetry", Conversation: idConv, Source: "s"},
		"empty source":       {Kind: wire.KindEvent, Conversation: idConv},
		"control in source":  {Kind: wire.KindEvent, Conversation: idConv, Source: "a\tb"},
		"empty target":       {Kind: wire.KindEvent, Conversation: idConv, Source: "s", Target: &emptyTarget},
		"long idem key":      {Kind: wire.KindEvent, Conversation: idConv, Source: "s", IdempotencyKey: &longKey},
		"non-UTF-8 op":       {Kind: wire.KindEvent, Conversation: idConv, Source: "s", Operation: &bad},
		"non-UTF-8 meta":     {Kind: wire.KindEvent, Conversation: idConv, Source: "s", Metadata: wire.Metadata{{Key: "k", Value: wire.StrValue(bad)}}},
		"non-UTF-8 meta key": {Kind: wire.KindEvent, Conversation: idConv, Source: "s", Metadata: wire.Metadata{{Key: bad, Value: wire.NullValue()}}},
	} {
		if _, err := env.Marshal(); !errors.Is(err, wire.ErrEncode) {
			t.Errorf("%s: Marshal error = %v, want ErrEncode", name, err)
		}
	}
}

func TestEnvelopeMarshalRefusesListsTooDeepToDecode(t *testing.T) {
	nest := func(n int) wire.Value {
		v := wire.NullValue()
		for i := 0; i < n; i++ {
			v = wire.ListValue(v)
		}
		return v
	}
	env := &wire.Envelope{Kind: wire.KindEvent, Conversation: idConv, Source: "s", Metadata: wire.Metadata{{Key: "k", Value: nest(254)}}}
	b, err := env.Marshal()
	if err != nil {
		t.Fatalf("254 levels: %v", err)
	}
	if _, err := wire.DecodeEnvelope(b); err != nil {
		t.Fatalf("254 levels do not decode: %v", err)
	}
	env.Metadata.Set("k", nest(255))
	if _, err := env.Marshal(); !errors.Is(err, wire.ErrBadValue) {
		t.Fatalf("255 levels: %v", err)
	}
}

func TestUnmetRequirements(t *testing.T) {
	env := &wire.Envelope{MustUnderstand: 5}
	for understood, want := range map[uint64]uint64{wire.FeaturesNone: 5, 1: 4, 5: 0, 7: 0, 4: 1} {
		if got := env.UnmetRequirements(understood); got != want {
			t.Errorf("UnmetRequirements(%b) = %b, want %b", understood, got, want)
		}
	}
}

func TestFenceReadsUintOrNonNegativeInt(t *testing.T) {
	for name, tc := range map[string]struct {
		m    wire.Metadata
		want uint64
		ok   bool
	}{
		"uint":         {wire.Metadata{{Key: wire.MetaFence, Value: wire.UintValue(7)}}, 7, true},
		"int":          {wire.Metadata{{Key: wire.MetaFence, Value: wire.IntValue(7)}}, 7, true},
		"negative int": {wire.Metadata{{Key: wire.MetaFence, Value: wire.IntValue(-1)}}, 0, false},
		"string":       {wire.Metadata{{Key: wire.MetaFence, Value: wire.StrValue("7")}}, 0, false},
		"float":        {wire.Metadata{{Key: wire.MetaFence, Value: wire.FloatValue(7)}}, 0, false},
		"absent":       {wire.Metadata{{Key: "other", Value: wire.UintValue(7)}}, 0, false},
		"no metadata":  {nil, 0, false},
	} {
		env := &wire.Envelope{Metadata: tc.m}
		if got, ok := env.Fence(); got != tc.want || ok != tc.ok {
			t.Errorf("%s: Fence() = %d, %v; want %d, %v", name, got, ok, tc.want, tc.ok)
		}
	}
	// A Uint written by a producer reads back as Int; Fence must still see it.
	env := &wire.Envelope{Kind: wire.KindEvent, Conversation: idConv, Source: "s", Metadata: wire.Metadata{{Key: wire.MetaFence, Value: wire.UintValue(3)}}}
	b, _ := env.Marshal()
	back, err := wire.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Metadata.Get(wire.MetaFence).Kind() != wire.ValueInt {
		t.Fatalf("small uint decoded as %s", back.Metadata.Get(wire.MetaFence).Kind())
	}
	if f, ok := back.Fence(); !ok || f != 3 {
		t.Fatalf("Fence after round trip = %d, %v", f, ok)
	}
}

func TestEnvelopeCloneIsDeep(t *testing.T) {
	files := agdxFixtures(t)
	b, ok := files["agent_command_signed.bin"]
	if !ok {
		t.Skip("agent_command_signed.bin is not in the fixture folder")
	}
	env, err := wire.DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	c := env.Clone()
	if diff := cmp.Diff(env, c); diff != "" {
		t.Fatalf("clone differs:\n%s", diff)
	}
	*c.Record = wire.ID{}
	*c.Target = "other"
	c.Body[0] = 'X'
	c.Metadata.Set("priority", wire.StrValue("low"))
	c.Signature.Bytes[0] ^= 1
	again, _ := env.Marshal()
	if !bytes.Equal(again, b) {
		t.Fatal("mutating the clone changed the original")
	}
}

func TestEnvelopeImplementsFxamackerInterfaces(t *testing.T) {
	env := &wire.Envelope{Kind: wire.KindEvent, Conversation: idConv, Source: "s", Body: []byte("x"),
		Metadata: wire.Metadata{{Key: "z", Value: wire.IntValue(1)}, {Key: "a", Value: wire.FloatValue(0.5)}}}
	want, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := cbor.Marshal(env)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("cbor.Marshal = %x, %v; want %x", got, err, want)
	}
	var back wire.Envelope
	if err := cbor.Unmarshal(want, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(env, &back); diff != "" {
		t.Fatalf("cbor.Unmarshal (-want +got):\n%s", diff)
	}
}
