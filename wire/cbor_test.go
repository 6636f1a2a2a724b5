package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

func TestAppendHeadShortestForm(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{0, "00"}, {23, "17"}, {24, "1818"}, {255, "18ff"}, {256, "190100"},
		{65535, "19ffff"}, {65536, "1a00010000"}, {math.MaxUint32, "1affffffff"},
		{math.MaxUint32 + 1, "1b0000000100000000"}, {math.MaxUint64, "1bffffffffffffffff"},
		{1_717_171_777_000_000, "1b000619c235c95240"},
	} {
		if got := hex.EncodeToString(appendHead(nil, majorUint, tc.n)); got != tc.want {
			t.Errorf("appendHead(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
	if got := hex.EncodeToString(appendInt(nil, -1)); got != "20" {
		t.Errorf("appendInt(-1) = %s", got)
	}
	if got := hex.EncodeToString(appendInt(nil, math.MinInt64)); got != "3b7fffffffffffffff" {
		t.Errorf("appendInt(MinInt64) = %s", got)
	}
}

func TestAppendFloatShortestExactWidth(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0.5, "f93800"}, {0.25, "f93400"}, {-0.5, "f9b800"}, {0.125, "f93000"},
		{0.95, "fb3fee666666666666"}, {0, "f90000"}, {math.Copysign(0, -1), "f98000"},
		{1, "f93c00"}, {65504, "f97bff"}, {65520, "fa477ff000"},
		{math.Ldexp(1, -24), "f90001"}, {math.Ldexp(1, -14), "f90400"}, {math.Ldexp(1023, -24), "f903ff"},
		{math.Ldexp(1, -25), "fa33000000"}, {100000, "fa47c35000"},
		{math.MaxFloat32, "fa7f7fffff"}, {1e300, "fb7e37e43c8800759c"},
		{float64(float32(0.1)), "fa3dcccccd"}, {0.1, "fb3fb999999999999a"},
		{math.Inf(1), "f97c00"}, {math.Inf(-1), "f9fc00"},
		{math.Float64frombits(0x7ff8_0000_0000_0000), "f97e00"}, // Rust's f64::NAN
		// Go's math.NaN carries a low payload bit, so it keeps all 64 bits.
		{math.NaN(), "fb7ff8000000000001"},
		{math.Float64frombits(0x7ff8_0000_2000_0000), "fa7fc00001"},
		{math.Float64frombits(0x7ff8_0000_0000_0001), "fb7ff8000000000001"},
		// A signaling NaN never narrows: the reference's conversions quiet it.
		{math.Float64frombits(0x7ff4_0000_0000_0000), "fb7ff4000000000000"},
	} {
		if got := hex.EncodeToString(appendFloat(nil, tc.f)); got != tc.want {
			t.Errorf("appendFloat(%v [%016x]) = %s, want %s", tc.f, math.Float64bits(tc.f), got, tc.want)
		}
	}
}

// fxamacker's ShortestFloat16 is an independent implementation of the same
// rule for non-NaN values; the two must agree bit for bit.
func TestAppendFloatAgreesWithFxamacker(t *testing.T) {
	em, err := cbor.EncOptions{ShortestFloat: cbor.ShortestFloat16}.EncMode()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(f float64) {
		want, err := em.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFloat(nil, f); !bytes.Equal(got, want) {
			t.Fatalf("appendFloat(%v [%016x]) = %x, fxamacker %x", f, math.Float64bits(f), got, want)
		}
	}
	for i := 0; i < 20000; i++ {
		// Mix fully random bits with values built to land near the f16 and
		// f32 boundaries, where the narrowing rules are easiest to get wrong.
		var f float64
		switch i % 4 {
		case 0:
			f = math.Float64frombits(rng.Uint64())
		case 1:
			f = float64(math.Float32frombits(rng.Uint32()))
		case 2:
			f = math.Ldexp(float64(rng.IntN(2048)), rng.IntN(60)-40)
		default:
			f = float16ToFloat64(uint16(rng.Uint32()))
		}
		if math.IsNaN(f) {
			continue
		}
		check(f)
	}
}

func TestFloatDecodeRoundTripsEveryHalf(t *testing.T) {
	for h := 0; h <= math.MaxUint16; h++ {
		f := float16ToFloat64(uint16(h))
		got := appendFloat(nil, f)
		want := []byte{cborFloat16, byte(h >> 8), byte(h)}
		quiet := h&0x7c00 != 0x7c00 || h&0x3ff == 0 || h&0x200 != 0
		if quiet && !bytes.Equal(got, want) {
			t.Fatalf("f16 %04x decodes to %v and re-encodes as %x", h, f, got)
		}
		r := reader{b: got}
		back, err := r.float()
		if err != nil || math.Float64bits(back) != math.Float64bits(f) {
			t.Fatalf("f16 %04x: decode(encode) = %016x, %v; want %016x", h, math.Float64bits(back), err, math.Float64bits(f))
		}
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReaderAcceptsWhatTheReferenceAccepts(t *testing.T) {
	for name, in := range map[string]string{
		"non-shortest uint head":   "1b0000000000000005",
		"tagged uint":              "c1c205",
		"indefinite array of ints": "9f0102ff",
		"indefinite map":           "bf6161 01 ff",
		"indefinite text":          "7f 6161 6162 ff",
		"float widths":             "83 f93c00 fa3f800000 fb3ff0000000000000",
		"nested":                   "81818181818100",
	} {
		r := reader{b: mustHex(t, in)}
		if err := r.skip(); err != nil || r.i != len(r.b) {
			t.Errorf("%s: skip = %v at %d/%d", name, err, r.i, len(r.b))
		}
	}
}

func TestReaderRejectsMalformed(t *testing.T) {
	for name, in := range map[string]string{
		"truncated head":            "19 01",
		"truncated string":          "65 6162",
		"reserved additional info":  "1c",
		"indefinite uint":           "1f",
		"lone break":                "ff",
		"indefinite text bad chunk": "7f 4161 ff",
		"nested indefinite chunk":   "7f 7f ff ff",
		"invalid utf-8":             "62 c328",
		"two-byte simple below 32":  "f8 10",
		"map runs past end":         "a2 0102",
		"array length huge":         "9b ffffffffffffffff",
		"break inside map value":    "bf 6161 ff",
		"unterminated indefinite":   "9f 01 02",
	} {
		r := reader{b: mustHex(t, in)}
		if err := r.skip(); err == nil {
			t.Errorf("%s: skip accepted %s", name, in)
		} else if !errors.Is(err, errMalformed) {
			t.Errorf("%s: error %v does not match errMalformed", name, err)
		}
	}
}

func TestReaderNestingCap(t *testing.T) {
	ok := bytes.Repeat([]byte{0x81}, MaxNestingDepth-1)
	ok = append(ok, 0x80)
	r := reader{b: ok}
	if err := r.skip(); err != nil {
		t.Fatalf("depth %d rejected: %v", MaxNestingDepth, err)
	}
	deep := append([]byte{0x81}, ok...)
	r = reader{b: deep}
	if err := r.skip(); err == nil || !strings.Contains(err.Error(), "nesting") {
		t.Fatalf("depth %d accepted: %v", MaxNestingDepth+1, err)
	}
}

func TestBinBytesAcceptsByteStringOrU8Array(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want []byte
	}{
		"byte string":        {"43010203", []byte{1, 2, 3}},
		"array of u8":        {"83010218ff", []byte{1, 2, 255}},
		"indefinite array":   {"9f0102ff", []byte{1, 2}},
		"indefinite bytes":   {"5f 4101 4102 ff", []byte{1, 2}},
		"empty is nil":       {"40", nil},
		"empty array is nil": {"80", nil},
	} {
		r := reader{b: mustHex(t, tc.in)}
		got, err := r.binBytes()
		if err != nil || !bytes.Equal(got, tc.want) || (tc.want == nil) != (got == nil) {
			t.Errorf("%s: binBytes = %x (nil %v), %v; want %x", name, got, got == nil, err, tc.want)
		}
	}
	for name, in := range map[string]string{
		"element over 255": "81190100",
		"negative element": "8120",
		"text":             "6161",
		"nested array":     "818101",
	} {
		r := reader{b: mustHex(t, in)}
		if _, err := r.binBytes(); err == nil {
			t.Errorf("%s: binBytes accepted %s", name, in)
		}
	}
}

func TestIDAcceptsOnly16ByteStrings(t *testing.T) {
	r := reader{b: mustHex(t, "50"+strings.Repeat("11", 16))}
	if id, err := r.id(); err != nil || id[0] != 0x11 {
		t.Fatalf("id = %x, %v", id, err)
	}
	for name, in := range map[string]string{
		"15 bytes": "4f" + strings.Repeat("11", 15),
		"17 bytes": "51" + strings.Repeat("11", 17),
		"u8 array": "90" + strings.Repeat("01", 16),
		"integer":  "01",
		"text":     "70" + strings.Repeat("31", 16),
	} {
		r := reader{b: mustHex(t, in)}
		if _, err := r.id(); err == nil {
			t.Errorf("%s: id accepted %s", name, in)
		}
	}
}
