package wire_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/lasergo/laser/wire"
)

func sampleHeaders() wire.Headers {
	return wire.Headers{
		{Key: wire.HeaderConversationID, Value: wire.StringValue(wire.IDFromUint128(1, 2).String())},
		{Key: wire.HeaderContentType, Value: wire.Uint8Value(3)},
		{Key: "x-tenant", Value: wire.StringValue("acme")},
	}
}

func TestEncodedHeadersGetReadsInPlace(t *testing.T) {
	enc := wire.MustEncodeHeaders(sampleHeaders())
	v, ok := enc.Get("x-tenant")
	if !ok || v.Kind != wire.HeaderKindString || string(v.Data) != "acme" {
		t.Fatalf("Get(x-tenant) = %v %v", v, ok)
	}
	if !bytes.Contains(enc.Bytes(), v.Data) || &v.Data[0] != &enc.Bytes()[bytes.Index(enc.Bytes(), []byte("acme"))] {
		t.Fatal("the value is a copy, not a view of the encoded bytes")
	}
	if _, ok := enc.Get("x-missing"); ok {
		t.Fatal("Get found a header that is not there")
	}
	if enc.Has("x-missing") || !enc.Has(wire.HeaderContentType) {
		t.Fatal("Has disagrees with the headers")
	}
}

func TestEncodedHeadersLenAllAndDecodeKeepOrder(t *testing.T) {
	h := sampleHeaders()
	enc := wire.MustEncodeHeaders(h)
	if enc.Len() != len(h) {
		t.Fatalf("Len = %d, want %d", enc.Len(), len(h))
	}
	i := 0
	for k, v := range enc.All() {
		if k != h[i].Key || v.Kind != h[i].Value.Kind || !bytes.Equal(v.Data, h[i].Value.Data) {
			t.Fatalf("entry %d = %s %v, want %s %v", i, k, v, h[i].Key, h[i].Value)
		}
		i++
	}
	if i != len(h) {
		t.Fatalf("All yielded %d entries, want %d", i, len(h))
	}
	back := enc.Decode()
	if len(back) != len(h) || back[2].Key != "x-tenant" || string(back[2].Value.Data) != "acme" {
		t.Fatalf("Decode = %v", back)
	}
	back[2].Value.Data[0] = 'X' // the decoded list is the caller's own
	if v, _ := enc.Get("x-tenant"); string(v.Data) != "acme" {
		t.Fatal("editing the decoded list changed the encoded headers")
	}
}

func TestEncodedHeadersSizeIsTheEncodedLength(t *testing.T) {
	h := sampleHeaders()
	enc := wire.MustEncodeHeaders(h)
	if enc.Size() != len(enc.Bytes()) || enc.Size() != h.EncodedLen() || enc.Size() != h.Size()+len(h) {
		t.Fatalf("Size = %d, bytes %d, EncodedLen %d, list Size %d", enc.Size(), len(enc.Bytes()), h.EncodedLen(), h.Size())
	}
}

func TestParseHeadersRoundTripsEncode(t *testing.T) {
	enc := wire.MustEncodeHeaders(sampleHeaders())
	parsed, err := wire.ParseHeaders(enc.Bytes())
	if err != nil || !parsed.Equal(enc) {
		t.Fatalf("ParseHeaders(Encode(h)) = %v, %v", parsed, err)
	}
}

func TestParseHeadersRefusesMalformedBytes(t *testing.T) {
	good := wire.MustEncodeHeaders(sampleHeaders()).Bytes()
	emptyValue := []byte{2, 1, 0, 0, 0, 'k', 2, 0, 0, 0, 0}
	badKind := []byte{2, 1, 0, 0, 0, 'k', 99, 1, 0, 0, 0, 'v'}
	shortFixed := []byte{2, 1, 0, 0, 0, 'k', byte(wire.HeaderKindUint32), 1, 0, 0, 0, 7}
	for name, b := range map[string][]byte{
		"cut short":         good[:len(good)-1],
		"value missing":     good[:5+len(wire.HeaderConversationID)],
		"empty value":       emptyValue,
		"unknown kind":      badKind,
		"fixed width wrong": shortFixed,
	} {
		if _, err := wire.ParseHeaders(b); !errors.Is(err, wire.ErrBadHeader) {
			t.Errorf("%s: err %v, want ErrBadHeader", name, err)
		}
	}
}

func TestHeadersEncodeRefusesWhatIggyRefuses(t *testing.T) {
	for name, h := range map[string]wire.Headers{
		"empty key":   {{Key: "", Value: wire.StringValue("v")}},
		"empty value": {{Key: "k", Value: wire.HeaderValue{Kind: wire.HeaderKindString}}},
		"long value":  {{Key: "k", Value: wire.StringValue(string(make([]byte, 256)))}},
		"bad kind":    {{Key: "k", Value: wire.HeaderValue{Kind: 0, Data: []byte{1}}}},
		"wrong width": {{Key: "k", Value: wire.HeaderValue{Kind: wire.HeaderKindUint64, Data: []byte{1}}}},
	} {
		if _, err := h.Encode(); !errors.Is(err, wire.ErrBadHeader) {
			t.Errorf("%s: err %v, want ErrBadHeader", name, err)
		}
	}
}

func TestEncodedHeadersZeroValueIsEmpty(t *testing.T) {
	var enc wire.EncodedHeaders
	if enc.Len() != 0 || enc.Size() != 0 || enc.Decode() != nil || enc.Has("k") {
		t.Fatal("the zero value is not empty")
	}
	none, err := wire.Headers(nil).Encode()
	if err != nil || !none.Equal(enc) {
		t.Fatalf("encoding no headers = %v, %v", none, err)
	}
}

func TestEncodedHeadersCloneAndAppendToCopy(t *testing.T) {
	enc := wire.MustEncodeHeaders(sampleHeaders())
	c := enc.Clone()
	buf, view := enc.AppendTo([]byte("prefix"))
	if !c.Equal(enc) || !view.Equal(enc) || string(buf[:6]) != "prefix" {
		t.Fatal("copies differ from the original")
	}
	enc.Bytes()[len(enc.Bytes())-1] = 'Z' // only to prove the copies are apart
	if c.Equal(enc) || view.Equal(enc) {
		t.Fatal("a copy shares bytes with the original")
	}
}

func TestEncodedHeadersGetAllocatesNothing(t *testing.T) {
	enc := wire.MustEncodeHeaders(sampleHeaders())
	if n := testing.AllocsPerRun(100, func() { _, _ = enc.Get("x-tenant") }); n != 0 {
		t.Fatalf("Get allocates %v times", n)
	}
}

func TestDecodeProvenanceFromEncodedHeadersAllocatesNothing(t *testing.T) {
	enc := wire.MustEncodeHeaders(sampleHeaders())
	var p wire.Provenance
	room := make([]byte, 64)
	if n := testing.AllocsPerRun(100, func() {
		if err := wire.DecodeProvenanceInto(&p, enc, room); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("DecodeProvenanceInto allocates %v times", n)
	}
}

// fixedWidthKinds are the header kinds whose keys and values have one size.
var fixedWidthKinds = []wire.HeaderKind{
	wire.HeaderKindBool, wire.HeaderKindInt8, wire.HeaderKindInt16, wire.HeaderKindInt32,
	wire.HeaderKindInt64, wire.HeaderKindInt128, wire.HeaderKindUint8, wire.HeaderKindUint16,
	wire.HeaderKindUint32, wire.HeaderKindUint64, wire.HeaderKindUint128, wire.HeaderKindFloat,
	wire.HeaderKindDouble,
}

// field encodes one kind-length-bytes field of n bytes of 'k'.
func field(kind wire.HeaderKind, n int) []byte {
	b := []byte{byte(kind), byte(n), byte(n >> 8), 0, 0}
	return append(b, bytes.Repeat([]byte{'k'}, n)...)
}

// TestParseHeadersRefusesAFixedWidthKeyOfAnotherWidth pins the rule Iggy's
// own readers apply to keys (iggy_common's user_headers_from_wire answers
// InvalidHeaderKey, the Go SDK "invalid header key size for kind"): a key
// of a fixed-width kind has exactly that width, as a value does.
func TestParseHeadersRefusesAFixedWidthKeyOfAnotherWidth(t *testing.T) {
	value := field(wire.HeaderKindString, 1)
	for _, kind := range fixedWidthKinds {
		for _, n := range []int{kind.FixedSize() - 1, kind.FixedSize() + 1, 7} {
			if n == 0 || n == kind.FixedSize() {
				continue
			}
			b := append(field(kind, n), value...)
			_, err := wire.ParseHeaders(b)
			var he *wire.HeaderError
			if !errors.As(err, &he) || !errors.Is(err, wire.ErrBadHeader) || !he.Key || he.Entry != 0 || he.Offset != 0 {
				t.Errorf("%s key of %d bytes: err %v, want a HeaderError on entry 0's key", kind, n, err)
			}
		}
	}
}

// TestParseHeadersAcceptsAFixedWidthKeyOfItsWidth: the rule refuses only the
// wrong width; a non-string key of the right width is a header like any
// other, found by its bytes.
func TestParseHeadersAcceptsAFixedWidthKeyOfItsWidth(t *testing.T) {
	for _, kind := range fixedWidthKinds {
		b := append(field(kind, kind.FixedSize()), field(wire.HeaderKindString, 2)...)
		h, err := wire.ParseHeaders(b)
		if err != nil {
			t.Fatalf("%s key of %d bytes: %v", kind, kind.FixedSize(), err)
		}
		if v, ok := h.Get(string(bytes.Repeat([]byte{'k'}, kind.FixedSize()))); !ok || string(v.Data) != "kk" || h.Len() != 1 {
			t.Fatalf("%s key: Get = %v %v, Len %d", kind, v, ok, h.Len())
		}
	}
}

// TestParseHeadersRefusesTheFuzzersDoubleKey replays the input of
// iggy/testdata/fuzz/FuzzDecodeHeaders/2f2b871d51e199ed: a double key of 7
// bytes, which the decoder used to accept and the Iggy SDK refuses.
func TestParseHeadersRefusesTheFuzzersDoubleKey(t *testing.T) {
	b := []byte("\x0f\a\x00\x00\x000000000\x02\a\x00\x00\x000000000")
	_, err := wire.ParseHeaders(b)
	want := "wire: invalid user header: entry 0 key at byte 0: double of 7 bytes, want 8"
	if err == nil || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
}

// TestHeaderErrorLocatesTheBadValue: a bad value is reported on its own
// entry, by its key, at the byte where the value starts.
func TestHeaderErrorLocatesTheBadValue(t *testing.T) {
	good := wire.MustEncodeHeaders(wire.Headers{{Key: "a", Value: wire.StringValue("x")}}).Bytes()
	bad := append(field(wire.HeaderKindString, 2), field(wire.HeaderKindUint64, 4)...)
	_, err := wire.ParseHeaders(append(append([]byte{}, good...), bad...))
	var he *wire.HeaderError
	if !errors.As(err, &he) {
		t.Fatalf("err %v, want a HeaderError", err)
	}
	want := wire.HeaderError{Entry: 1, Name: "kk", Offset: len(good) + 7, Reason: "uint64 of 4 bytes, want 8"}
	if *he != want {
		t.Fatalf("HeaderError %+v, want %+v", *he, want)
	}
	if msg := `wire: invalid user header: entry 1 value of "kk" at byte 19: uint64 of 4 bytes, want 8`; err.Error() != msg {
		t.Fatalf("message %q, want %q", err, msg)
	}
}
