package xxh32

import (
	"testing"
)

// sample is the input whose prefixes the reference table hashes: byte i is
// (i*131 + 7) mod 256, so every length exercises a different tail.
func sample() []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	return b
}

// Reference values computed with the Python xxhash package (xxh32) over
// sample()[:n] for n = 0..40.
var prefixSeed0 = [41]uint32{
	0x02CC5D05, 0x002E0D32, 0x0606F454, 0x7D92E8DB, 0xF189EC97, 0x4400AF42, 0x4FAE31D1, 0x78C6CA48,
	0xC78AA5CD, 0x0D33D200, 0x28D9E195, 0xB8885DCF, 0x355BCE76, 0x814C3AF0, 0x3E0147F8, 0x57055FE6,
	0x64287C90, 0x1C63FDC5, 0xB312F894, 0x70BE0753, 0x1719C5B7, 0x568AD574, 0x2B7CBCB8, 0x7D8C7A75,
	0x688D0768, 0x0E03559F, 0xE016EF1E, 0x9317611D, 0x1903590D, 0x0D0DD2C2, 0x58F1B9CA, 0x2AB3EB71,
	0x1E1BFF83, 0x2934FD43, 0xCE0E841E, 0x26D042D3, 0x817BC922, 0x7161DDEB, 0x9E6DAEB6, 0x0670F2F4,
	0xF8F5C334,
}

var prefixSeedGolden = [41]uint32{
	0x36B78AE7, 0xD40FE509, 0x4168FE29, 0xD2BA9EDA, 0xDA1F7E37, 0x5EFFFF31, 0x7BCA1B1C, 0xBCB5FD55,
	0x5A5B59E6, 0x5DC52D25, 0x2A96BBC4, 0x05F7A501, 0xE329B411, 0xDBC10521, 0xD3C92E05, 0x2BB2A97B,
	0x63EDBB26, 0x72562220, 0x81E67A07, 0x37033A6A, 0x3A23518E, 0xD67208EA, 0x17085944, 0x6006E60C,
	0x49D17B82, 0x64F643C0, 0xFA487B79, 0xA9097350, 0x7F52E356, 0x155E3E6E, 0x00818DD2, 0x6782F4D6,
	0x7020B1E5, 0x66B35A99, 0x574E27A6, 0x301EC49C, 0x44E7B039, 0x6A921D05, 0xA8DA415C, 0x40E30DA5,
	0xE26F9210,
}

func TestSum32PublishedVectors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02CC5D05},
		{"a", 0x550D7456},
		{"abc", 0x32D153FF},
		{"hello world", 0xCEBB6622},
		{"conversation-1", 0x2CF99F99},
	} {
		if got := Sum32([]byte(tc.in), 0); got != tc.want {
			t.Errorf("Sum32(%q, 0) = %#08x, want %#08x", tc.in, got, tc.want)
		}
	}
}

func TestSum32EveryLengthSeedZero(t *testing.T) {
	b := sample()
	for n, want := range prefixSeed0 {
		if got := Sum32(b[:n], 0); got != want {
			t.Errorf("length %d: got %#08x, want %#08x", n, got, want)
		}
	}
}

func TestSum32EveryLengthNonZeroSeed(t *testing.T) {
	b := sample()
	for n, want := range prefixSeedGolden {
		if got := Sum32(b[:n], 0x9E3779B1); got != want {
			t.Errorf("length %d: got %#08x, want %#08x", n, got, want)
		}
	}
}

func TestSum32DoesNotAllocate(t *testing.T) {
	b := sample()
	allocs := testing.AllocsPerRun(100, func() { _ = Sum32(b, 0) })
	if allocs != 0 {
		t.Fatalf("Sum32 allocated %v times per call", allocs)
	}
}

func BenchmarkSum32(b *testing.B) {
	data := make([]byte, 32)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		_ = Sum32(data, 0)
	}
}
