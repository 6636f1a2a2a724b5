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
