package wire_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/wire"
)

func TestHeaderValueEncodings(t *testing.T) {
	conv := wire.IDFromUint128(0x01903c1faa000000, 2)
	for _, tc := range []struct {
		name string
		v    wire.HeaderValue
		kind wire.HeaderKind
		data []byte
	}{
		{"agent version", wire.Uint32Value(1), wire.HeaderKindUint32, []byte{1, 0, 0, 0}},
		{"content type json", wire.Uint8Value(uint8(wire.ContentJSON)), wire.HeaderKindUint8, []byte{1}},
		{"conversation", wire.Uint128Value(conv), wire.HeaderKindUint128, []byte{0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xaa, 0x1f, 0x3c, 0x90, 0x01}},
		{"string", wire.StringValue("target-agent"), wire.HeaderKindString, []byte("target-agent")},
	} {
		if tc.v.Kind != tc.kind || !bytes.Equal(tc.v.Data, tc.data) {
			t.Errorf("%s = {%s %x}, want {%s %x}", tc.name, tc.v.Kind, tc.v.Data, tc.kind, tc.data)
		}
	}
}

func TestHeaderValueAccessors(t *testing.T) {
	conv := wire.IDFromUint128(0x01903c1faa000000, 2)
	if v, err := wire.Uint32Value(0xdeadbeef).AsUint32(); err != nil || v != 0xdeadbeef {
		t.Errorf("AsUint32 = %#x, %v", v, err)
	}
	if v, err := wire.Uint8Value(255).AsUint8(); err != nil || v != 255 {
		t.Errorf("AsUint8 = %d, %v", v, err)
	}
	if v, err := wire.Uint128Value(conv).AsUint128(); err != nil || v != conv {
		t.Errorf("AsUint128 = %s, %v", v, err)
	}
	if v, err := wire.StringValue("x").AsString(); err != nil || v != "x" {
		t.Errorf("AsString = %q, %v", v, err)
	}
}

func TestHeaderValueAccessorsRejectWrongType(t *testing.T) {
	for name, fn := range map[string]func() error{
		"string as u8":  func() error { _, err := wire.StringValue("1").AsUint8(); return err },
		"u8 as u32":     func() error { _, err := wire.Uint8Value(1).AsUint32(); return err },
		"u32 as string": func() error { _, err := wire.Uint32Value(1).AsString(); return err },
		"short u32": func() error {
			_, err := wire.HeaderValue{Kind: wire.HeaderKindUint32, Data: []byte{1}}.AsUint32()
			return err
		},
		"empty u8": func() error { _, err := wire.HeaderValue{Kind: wire.HeaderKindUint8}.AsUint8(); return err },
		"15-byte uint128": func() error {
			_, err := wire.HeaderValue{Kind: wire.HeaderKindUint128, Data: make([]byte, 15)}.AsUint128()
			return err
		},
		"raw as string": func() error {
			_, err := wire.HeaderValue{Kind: wire.HeaderKindRaw, Data: []byte("x")}.AsString()
			return err
		},
		"int128 as uint128": func() error {
			_, err := wire.HeaderValue{Kind: wire.HeaderKindInt128, Data: make([]byte, 16)}.AsUint128()
			return err
		},
	} {
		if err := fn(); !errors.Is(err, wire.ErrHeaderType) {
			t.Errorf("%s: error = %v, want ErrHeaderType", name, err)
		}
	}
}

func TestHeaderKindNamesAndSizes(t *testing.T) {
	if wire.HeaderKindUint128.String() != "uint128" || wire.HeaderKindString.String() != "string" || wire.HeaderKind(99).String() != "kind(99)" {
		t.Fatal("HeaderKind.String is wrong")
	}
	for k, n := range map[wire.HeaderKind]int{
		wire.HeaderKindRaw: 0, wire.HeaderKindString: 0, wire.HeaderKindBool: 1, wire.HeaderKindUint16: 2,
		wire.HeaderKindFloat: 4, wire.HeaderKindDouble: 8, wire.HeaderKindUint128: 16,
	} {
		if got := k.FixedSize(); got != n {
			t.Errorf("%s.FixedSize() = %d, want %d", k, got, n)
		}
	}
}

func TestHeadersGetSetDel(t *testing.T) {
	var h wire.Headers
	h.Set("a", wire.StringValue("1"))
	h.Set("b", wire.StringValue("2"))
	h.Set("a", wire.StringValue("3"))
	if len(h) != 2 {
		t.Fatalf("Set appended a duplicate: %v", h)
	}
	if v, ok := h.Get("a"); !ok || string(v.Data) != "3" {
		t.Fatalf("Get(a) = %v, %v", v, ok)
	}
	h.Del("a")
	if _, ok := h.Get("a"); ok || len(h) != 1 {
		t.Fatalf("Del left %v", h)
	}
	if _, ok := h.Get("missing"); ok {
		t.Fatal("Get found a missing key")
	}
}

func TestHeadersCloneIsDeep(t *testing.T) {
	h := wire.Headers{{Key: "k", Value: wire.StringValue("abc")}}
	c := h.Clone()
	c[0].Value.Data[0] = 'X'
	if string(h[0].Value.Data) != "abc" {
		t.Fatal("Clone shares value bytes with the original")
	}
	if wire.Headers(nil).Clone() != nil {
		t.Fatal("Clone(nil) is not nil")
	}
}

func TestHeadersSizeCountsFraming(t *testing.T) {
	h := wire.Headers{{Key: "agdx.ct", Value: wire.Uint8Value(1)}, {Key: "agdx.av", Value: wire.Uint32Value(1)}}
	if got, want := h.Size(), (7+1+9)+(7+4+9); got != want {
		t.Fatalf("Size = %d, want %d", got, want)
	}
}

func TestEnvelopeHeadersExactSet(t *testing.T) {
	conv := wire.IDFromUint128(0x01903c1faa000000, 2)
	target := wire.AgentID("target-agent")
	env := &wire.Envelope{Kind: wire.KindEvent, Conversation: conv, Source: "s", Target: &target}
	want := wire.Headers{
		{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(1)},
		{Key: wire.HeaderContentType, Value: wire.Uint8Value(1)},
		{Key: wire.HeaderTarget, Value: wire.StringValue("target-agent")},
		{Key: wire.HeaderAgentID, Value: wire.StringValue("s")},
		{Key: wire.HeaderConversationID, Value: wire.StringValue(conv.String())},
	}
	if diff := cmp.Diff(want, wire.EnvelopeHeaders(env, wire.ContentJSON)); diff != "" {
		t.Fatalf("EnvelopeHeaders (-want +got):\n%s", diff)
	}
	env.Target = nil
	want[2].Value = wire.StringValue(wire.BroadcastTarget)
	if diff := cmp.Diff(want, wire.EnvelopeHeaders(env, wire.ContentJSON)); diff != "" {
		t.Fatalf("EnvelopeHeaders without target (-want +got):\n%s", diff)
	}
	env.Source = ""
	if diff := cmp.Diff(append(want[:3:3], want[4]), wire.EnvelopeHeaders(env, wire.ContentJSON)); diff != "" {
		t.Fatalf("EnvelopeHeaders without source (-want +got):\n%s", diff)
	}
}

func TestHeaderConversationReadsBothForms(t *testing.T) {
	conv := wire.IDFromUint128(0x01903c1faa000000, 7)
	for name, tc := range map[string]struct {
		h    wire.Headers
		want wire.ID
		ok   bool
	}{
		"ULID text":    {wire.Headers{{Key: wire.HeaderConversationID, Value: wire.StringValue(conv.String())}}, conv, true},
		"Uint128":      {wire.Headers{{Key: wire.HeaderConversationID, Value: wire.Uint128Value(conv)}}, conv, true},
		"absent":       {wire.Headers{{Key: wire.HeaderAgentID, Value: wire.StringValue("a")}}, wire.ID{}, false},
		"not an id":    {wire.Headers{{Key: wire.HeaderConversationID, Value: wire.StringValue("conversation-7")}}, wire.ID{}, false},
		"another kind": {wire.Headers{{Key: wire.HeaderConversationID, Value: wire.Uint32Value(7)}}, wire.ID{}, false},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := wire.HeaderConversation(wire.MustEncodeHeaders(tc.h))
			if got != tc.want || ok != tc.ok {
				t.Fatalf("HeaderConversation = %s, %v; want %s, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
