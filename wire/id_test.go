package wire_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lasergo/laser/wire"
)

func TestIDCrockfordVectors(t *testing.T) {
	for _, tc := range []struct {
		hi, lo uint64
		text   string
	}{
		{0x01903c1faa000000, 1, "01J0Y1ZAG00000000000000001"},
		{0x01903c1faa000000, 2, "01J0Y1ZAG00000000000000002"},
		{^uint64(0), ^uint64(0), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"},
		{0, 0, "00000000000000000000000000"},
		{0, 31, "0000000000000000000000000Z"},
		{0, 32, "00000000000000000000000010"},
	} {
		id := wire.IDFromUint128(tc.hi, tc.lo)
		if got := id.String(); got != tc.text {
			t.Errorf("IDFromUint128(%#x, %#x).String() = %s, want %s", tc.hi, tc.lo, got, tc.text)
		}
		parsed, err := wire.ParseID(tc.text)
		if err != nil || parsed != id {
			t.Errorf("ParseID(%s) = %x, %v; want %x", tc.text, parsed, err, id)
		}
		if hi, lo := parsed.Uint128(); hi != tc.hi || lo != tc.lo {
			t.Errorf("Uint128() = %#x, %#x", hi, lo)
		}
	}
}

func TestIDFixtureBytesAreBigEndian(t *testing.T) {
	id := wire.IDFromUint128(0x01903c1faa000000, 1)
	want := [16]byte{0x01, 0x90, 0x3c, 0x1f, 0xaa, 15: 0x01}
	if id != want {
		t.Fatalf("id bytes = %x, want %x", id, want)
	}
}

func TestParseIDAcceptsLowerCase(t *testing.T) {
	id, err := wire.ParseID(strings.ToLower("01J0Y1ZAG00000000000000001"))
	if err != nil || id != wire.IDFromUint128(0x01903c1faa000000, 1) {
		t.Fatalf("ParseID(lower) = %s, %v", id, err)
	}
}

func TestParseIDRejects(t *testing.T) {
	for name, text := range map[string]string{
		"alias I":         "0000000000000000000000000I",
		"alias L":         "0000000000000000000000000L",
		"alias O":         "0000000000000000000000000O",
		"letter U":        "0000000000000000000000000U",
		"lower alias i":   "0000000000000000000000000i",
		"first digit 8":   "80000000000000000000000000",
		"first digit Z":   "ZZZZZZZZZZZZZZZZZZZZZZZZZZ",
		"too short":       "0000000000000000000000000",
		"too long":        "000000000000000000000000000",
		"empty":           "",
		"punctuation":     "0000000000000000000000000-",
		"multi-byte rune": "000000000000000000000000é",
	} {
		if _, err := wire.ParseID(text); !errors.Is(err, wire.ErrBadID) {
			t.Errorf("%s: ParseID(%q) error = %v, want ErrBadID", name, text, err)
		}
	}
}

func TestIDTextMarshalling(t *testing.T) {
	id := wire.IDFromUint128(0x0123456789abcdef, 0xfedcba9876543210)
	text, err := id.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var back wire.ID
	if err := back.UnmarshalText(text); err != nil || back != id {
		t.Fatalf("UnmarshalText(%s) = %x, %v", text, back, err)
	}
	if err := back.UnmarshalText([]byte("bad")); !errors.Is(err, wire.ErrBadID) {
		t.Fatalf("UnmarshalText(bad) error = %v", err)
	}
	appended, _ := id.AppendText([]byte("id="))
	if string(appended) != "id="+id.String() {
		t.Fatalf("AppendText = %s", appended)
	}
}

func TestNewULIDLayout(t *testing.T) {
	entropy := [10]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	id := wire.NewULID(0x0190_3c1f_aa00, entropy)
	want := wire.ID{0x01, 0x90, 0x3c, 0x1f, 0xaa, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if id != want {
		t.Fatalf("NewULID = %x, want %x", id, want)
	}
	if !strings.HasPrefix(id.String(), "01J0Y1ZAG0") {
		t.Fatalf("time prefix of %s does not sort like the reference's ULIDs", id)
	}
	if id.IsZero() || !(wire.ID{}).IsZero() {
		t.Fatal("IsZero is wrong")
	}
}

func TestPartitionKeyIsCrockfordText(t *testing.T) {
	conv := wire.IDFromUint128(0x01903c1faa000000, 2)
	if got := wire.PartitionKey(conv); got != "01J0Y1ZAG00000000000000002" {
		t.Fatalf("PartitionKey = %s", got)
	}
}

// TestParseIDRoundTripsEveryBitPosition checks the split-run parser against
// the text form for one bit set at every position and for patterns that
// straddle the 60-bit runs.
func TestParseIDRoundTripsEveryBitPosition(t *testing.T) {
	var ids [][2]uint64
	for bit := range 128 {
		if bit < 64 {
			ids = append(ids, [2]uint64{0, 1 << bit})
		} else {
			ids = append(ids, [2]uint64{1 << (bit - 64), 0})
		}
	}
	ids = append(ids, [2]uint64{0x0123456789abcdef, 0xfedcba9876543210}, [2]uint64{0xf0f0f0f0f0f0f0f0, 0x0f0f0f0f0f0f0f0f})
	for _, v := range ids {
		id := wire.IDFromUint128(v[0], v[1])
		got, err := wire.ParseID(id.String())
		if err != nil || got != id {
			t.Errorf("ParseID(%s) = %x, %v; want %x", id, got, err, id)
		}
	}
}
