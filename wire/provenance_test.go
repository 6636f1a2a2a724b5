package wire_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/lasergo/laser/wire"
)

func fullProvenance() wire.Provenance {
	return wire.Provenance{
		Conversation:       idConv,
		CausalParent:       &wire.MessageID{Partition: 2, Offset: 7},
		ParentConversation: p(wire.IDFromUint128(1, 1)),
		RootConversation:   p(wire.IDFromUint128(2, 2)),
		Agent:              "planner",
		Target:             "booker",
		IdempotencyKey:     "k1",
		Correlation:        "01J0Y1ZAG00000000000000005",
		Fence:              p(uint64(3)),
		Deadline:           p(uint64(1_717_171_777_000_000)),
		InputTokens:        p(uint64(1200)),
		OutputTokens:       p(uint64(256)),
		Cost:               p(0.0125),
	}
}

func TestProvenanceHeadersRoundTrip(t *testing.T) {
	prov := fullProvenance()
	h, err := prov.Headers()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range h {
		if e.Value.Kind != wire.HeaderKindString {
			t.Errorf("%s has kind %s, want string", e.Key, e.Value.Kind)
		}
	}
	back, err := wire.DecodeProvenance(wire.MustEncodeHeaders(h))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(prov, back); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if back.PartitionKey() != "01J0Y1ZAG00000000000000002" {
		t.Fatalf("PartitionKey = %s", back.PartitionKey())
	}
}

func TestProvenanceHeadersExactValuesAndOrder(t *testing.T) {
	prov := fullProvenance()
	h, err := prov.Headers()
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{
		{"agdx.cause", "2:7"},
		{"agdx.corr", "01J0Y1ZAG00000000000000005"},
		{"agdx.cost", "0.0125"},
		{"agdx.deadline", "1717171777000000"},
		{"agdx.fence", "3"},
		{"agdx.idem", "k1"},
		{"agdx.parent_conv", wire.IDFromUint128(1, 1).String()},
		{"agdx.root_conv", wire.IDFromUint128(2, 2).String()},
		{"agdx.to", "booker"},
		{"gen_ai.agent.id", "planner"},
		{"gen_ai.conversation.id", "01J0Y1ZAG00000000000000002"},
		{"gen_ai.usage.input_tokens", "1200"},
		{"gen_ai.usage.output_tokens", "256"},
	}
	var got [][2]string
	for _, e := range h {
		got = append(got, [2]string{e.Key, string(e.Value.Data)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestProvenanceMinimalHasOnlyConversation(t *testing.T) {
	h, err := (&wire.Provenance{Conversation: idConv}).Headers()
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Key != wire.HeaderConversationID {
		t.Fatalf("headers = %v", h)
	}
}

func TestProvenanceCostFormatting(t *testing.T) {
	for f, want := range map[float64]string{1: "1", 0.1: "0.1", 1e21: "1000000000000000000000", 1.5e-7: "0.00000015", -2.25: "-2.25"} {
		prov := wire.Provenance{Conversation: idConv, Cost: p(f)}
		h, err := prov.Headers()
		if err != nil {
			t.Fatal(err)
		}
		v, _ := h.Get(wire.HeaderCost)
		if string(v.Data) != want {
			t.Errorf("cost %v = %q, want %q", f, v.Data, want)
		}
	}
	for _, f := range []float64{math.Inf(1), math.NaN()} {
		if _, err := (&wire.Provenance{Conversation: idConv, Cost: p(f)}).Headers(); !errors.Is(err, wire.ErrProvenanceValue) {
			t.Errorf("cost %v: %v", f, err)
		}
	}
}

func TestProvenanceValueRules(t *testing.T) {
	for name, prov := range map[string]wire.Provenance{
		"256-byte agent": {Conversation: idConv, Agent: strings.Repeat("a", 256)},
		"control byte":   {Conversation: idConv, IdempotencyKey: "a\x1fb"},
		"DEL":            {Conversation: idConv, Correlation: "a\x7f"},
		"invalid UTF-8":  {Conversation: idConv, Target: "\xff"},
	} {
		if _, err := prov.Headers(); !errors.Is(err, wire.ErrProvenanceValue) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := (&wire.Provenance{Conversation: idConv, Agent: strings.Repeat("a", 255)}).Headers(); err != nil {
		t.Errorf("255-byte value rejected: %v", err)
	}
}

func TestProvenanceSizeCap(t *testing.T) {
	// conversation: 22+26+9 = 57; four 255-byte values under 7..15-byte keys
	// add 4*(255+9)+key lengths and cross 1024.
	v := strings.Repeat("v", 255)
	prov := wire.Provenance{Conversation: idConv, Agent: v, Target: v, IdempotencyKey: v, Correlation: v}
	if _, err := prov.Headers(); !errors.Is(err, wire.ErrProvenanceTooLarge) {
		t.Fatalf("error = %v, want ErrProvenanceTooLarge", err)
	}
	prov.Correlation = strings.Repeat("v", 100)
	h, err := prov.Headers()
	if err != nil {
		t.Fatalf("under the cap: %v", err)
	}
	if h.Size() > wire.HeaderSoftCap {
		t.Fatalf("accepted %d bytes", h.Size())
	}
}

func TestProvenanceAppendHeadersKeepsExisting(t *testing.T) {
	existing := wire.Headers{{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(wire.ContentCBOR))}}
	prov := wire.Provenance{Conversation: idConv}
	h, err := prov.AppendHeaders(existing)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Key != wire.HeaderContentType || h[1].Key != wire.HeaderConversationID {
		t.Fatalf("headers = %v", h)
	}
	prov.Agent = "\x00"
	h, err = prov.AppendHeaders(existing)
	if err == nil || len(h) != 1 {
		t.Fatalf("a failed append returned %v, %v", h, err)
	}
}

func TestDecodeProvenanceFailsClosed(t *testing.T) {
	conv := wire.Header{Key: wire.HeaderConversationID, Value: wire.StringValue(idConv.String())}
	str := func(k, v string) wire.Header { return wire.Header{Key: k, Value: wire.StringValue(v)} }
	for name, tc := range map[string]struct {
		h  wire.Headers
		is error
	}{
		"missing conversation":    {wire.Headers{str(wire.HeaderAgentID, "a")}, wire.ErrMissingConversation},
		"typed conversation":      {wire.Headers{{Key: wire.HeaderConversationID, Value: wire.Uint128Value(idConv)}}, wire.ErrHeaderType},
		"typed fence":             {wire.Headers{conv, {Key: wire.HeaderFence, Value: wire.Uint32Value(3)}}, wire.ErrHeaderType},
		"malformed fence":         {wire.Headers{conv, str(wire.HeaderFence, "three")}, wire.ErrProvenanceValue},
		"negative deadline":       {wire.Headers{conv, str(wire.HeaderDeadline, "-1")}, wire.ErrProvenanceValue},
		"overflowing tokens":      {wire.Headers{conv, str(wire.HeaderUsageInputTokens, "18446744073709551616")}, wire.ErrProvenanceValue},
		"blank fence":             {wire.Headers{conv, str(wire.HeaderFence, " ")}, wire.ErrProvenanceValue},
		"bad conversation":        {wire.Headers{str(wire.HeaderConversationID, "not-an-id")}, wire.ErrProvenanceValue},
		"cause with leading zero": {wire.Headers{conv, str(wire.HeaderCausalParent, "02:7")}, wire.ErrProvenanceValue},
		"non-finite cost":         {wire.Headers{conv, str(wire.HeaderCost, "inf")}, wire.ErrProvenanceValue},
		"overflowing cost":        {wire.Headers{conv, str(wire.HeaderCost, "1e999")}, wire.ErrProvenanceValue},
		"hex cost":                {wire.Headers{conv, str(wire.HeaderCost, "0x1p-2")}, wire.ErrProvenanceValue},
		"bad root conversation":   {wire.Headers{conv, str(wire.HeaderRootConversation, "x")}, wire.ErrProvenanceValue},
	} {
		if _, err := wire.DecodeProvenance(wire.MustEncodeHeaders(tc.h)); !errors.Is(err, tc.is) {
			t.Errorf("%s: error = %v, want %v", name, err, tc.is)
		}
	}
}

func TestDecodeProvenanceIgnoresForeignHeaders(t *testing.T) {
	h := wire.Headers{
		{Key: wire.HeaderContentType, Value: wire.Uint8Value(3)},
		{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(9)},
		{Key: "x-custom", Value: wire.HeaderValue{Kind: wire.HeaderKindRaw, Data: []byte{0}}},
		{Key: wire.HeaderDelegatedBy, Value: wire.Uint8Value(1)},
		{Key: wire.HeaderConversationID, Value: wire.StringValue(strings.ToLower(idConv.String()))},
		{Key: wire.HeaderFence, Value: wire.StringValue("+007")},
	}
	prov, err := wire.DecodeProvenance(wire.MustEncodeHeaders(h))
	if err != nil {
		t.Fatal(err)
	}
	if prov.Conversation != idConv || prov.Fence == nil || *prov.Fence != 7 {
		t.Fatalf("provenance = %+v", prov)
	}
}

func TestParseMessageIDStrict(t *testing.T) {
	for in, want := range map[string]wire.MessageID{
		"2:7": {Partition: 2, Offset: 7}, "0:0": {}, "4294967295:18446744073709551615": {Partition: math.MaxUint32, Offset: math.MaxUint64},
	} {
		got, err := wire.ParseMessageID(in)
		if err != nil || got != want {
			t.Errorf("ParseMessageID(%q) = %+v, %v", in, got, err)
		}
		if got.String() != in {
			t.Errorf("String() = %q, want %q", got.String(), in)
		}
	}
	for _, in := range []string{"", "2", ":7", "2:", "02:7", "2:07", "+2:7", "-2:7", " 2:7", "2 :7", "2:7 ", "2:7:1", "4294967296:0", "0:18446744073709551616", "a:b", "2;7"} {
		if _, err := wire.ParseMessageID(in); !errors.Is(err, wire.ErrBadMessageID) {
			t.Errorf("ParseMessageID(%q) error = %v", in, err)
		}
	}
}

func TestDecodeProvenanceRefusesARepeatedKnownKey(t *testing.T) {
	conv := wire.IDFromUint128(0, 9).String()
	h := wire.Headers{
		{Key: wire.HeaderConversationID, Value: wire.StringValue(conv)},
		{Key: wire.HeaderIdempotencyKey, Value: wire.StringValue("a")},
		{Key: wire.HeaderIdempotencyKey, Value: wire.StringValue("b")},
	}
	if _, err := wire.DecodeProvenance(wire.MustEncodeHeaders(h)); !errors.Is(err, wire.ErrProvenanceValue) {
		t.Fatalf("err = %v, want a provenance error for the repeated key", err)
	}
	h = wire.Headers{{Key: wire.HeaderConversationID, Value: wire.StringValue(conv)}, {Key: "x-other", Value: wire.StringValue("1")}, {Key: "x-other", Value: wire.StringValue("2")}}
	if _, err := wire.DecodeProvenance(wire.MustEncodeHeaders(h)); err != nil {
		t.Fatalf("repeated unknown keys are none of provenance's business: %v", err)
	}
}

func TestProvenanceAgentIDsFollowTheSDKRules(t *testing.T) {
	conv := wire.Header{Key: wire.HeaderConversationID, Value: wire.StringValue(wire.IDFromUint128(1, 2).String())}
	for _, key := range []string{wire.HeaderAgentID, wire.HeaderTarget} {
		for _, bad := range []string{"shop\x00", "shop\x1b[31m", "shop\u0085", "shop\x7f", strings.Repeat("a", 256)} {
			enc, err := wire.Headers{conv, {Key: key, Value: wire.StringValue(bad)}}.Encode()
			if len(bad) > wire.HeaderValueMax {
				// Too long to travel at all: refused before provenance is read.
				if !errors.Is(err, wire.ErrBadHeader) {
					t.Errorf("encode header %s of %d bytes: err %v, want ErrBadHeader", key, len(bad), err)
				}
			} else if _, err := wire.DecodeProvenance(enc); !errors.Is(err, wire.ErrProvenanceValue) || !errors.Is(err, wire.ErrBadAgentID) {
				t.Errorf("decode %s=%q: err %v, want a bad agent id", key, bad, err)
			}
			p := wire.Provenance{Conversation: wire.IDFromUint128(1, 2), Agent: bad}
			if key == wire.HeaderTarget {
				p = wire.Provenance{Conversation: wire.IDFromUint128(1, 2), Target: bad}
			}
			if _, err := p.Headers(); !errors.Is(err, wire.ErrProvenanceValue) {
				t.Errorf("encode %s=%q: err %v, want a refusal", key, bad, err)
			}
		}
		good := strings.Repeat("é", 127) // 254 bytes
		p, err := wire.DecodeProvenance(wire.MustEncodeHeaders(wire.Headers{conv, {Key: key, Value: wire.StringValue(good)}}))
		if err != nil || (p.Agent != good && p.Target != good) {
			t.Errorf("decode %s of 254 bytes: %+v %v", key, p, err)
		}
	}
}

// TestDecodeProvenanceIntoKeepsTextInTheRoomGiven decodes into a room that
// holds the first text value but not the second: the first views the room,
// the second gets bytes of its own, both read right, and a provenance that
// held other values before is overwritten whole.
func TestDecodeProvenanceIntoKeepsTextInTheRoomGiven(t *testing.T) {
	fence := uint64(3)
	in := wire.Provenance{Conversation: wire.IDFromUint128(1, 2), Agent: "planner", IdempotencyKey: "order-42", Fence: &fence}
	h, err := in.Headers()
	if err != nil {
		t.Fatal(err)
	}
	room := make([]byte, 8)
	stale := uint64(9)
	p := wire.Provenance{Target: "someone", Deadline: &stale}
	if err := wire.DecodeProvenanceInto(&p, wire.MustEncodeHeaders(h), room); err != nil {
		t.Fatal(err)
	}
	if p.Conversation != in.Conversation || p.Agent != "planner" || p.IdempotencyKey != "order-42" || p.Fence == nil || *p.Fence != 3 {
		t.Fatalf("decoded %+v", p)
	}
	if p.Target != "" || p.Deadline != nil {
		t.Fatalf("values of the provenance decoded into survived: target %q deadline %v", p.Target, p.Deadline)
	}
	inRoom := func(s string) bool {
		d := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		r := uintptr(unsafe.Pointer(&room[0]))
		return d >= r && d < r+uintptr(len(room))
	}
	// Whichever of the two comes first in the headers fits the room (both
	// are at most 8 bytes); the other does not fit beside it.
	first, second := p.Agent, p.IdempotencyKey
	for _, e := range h {
		if e.Key == wire.HeaderIdempotencyKey {
			first, second = second, first
			break
		}
		if e.Key == wire.HeaderAgentID {
			break
		}
	}
	if !inRoom(first) || inRoom(second) {
		t.Fatalf("%q in the room %v, %q in the room %v; want the first only", first, inRoom(first), second, inRoom(second))
	}
}
