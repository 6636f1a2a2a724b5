package runtime

import (
	"testing"

	"github.com/lasergo/laser/wire"
)

// The reproducer, at a window of 4 instead of 16,384: once the
// window forgot a signed record, its replay is refused by its signer's
// horizon rather than taken for a first sight; another signer is unaffected.
func TestReplayPastTheWindowIsRefusedByTheSignersHorizon(t *testing.T) {
	g := newReplayGuard(4)
	id := func(n uint64) wire.ID { return wire.IDFromUint128(0xa, n) }
	if g.admit(id(1), "shop", 100) != firstSight {
		t.Fatal("first record refused")
	}
	for n := uint64(2); n <= 5; n++ {
		if g.admit(id(n), "shop", 100+n) != firstSight {
			t.Fatalf("record %d refused", n)
		}
	}
	if v := g.admit(id(1), "shop", 100); v != pastHorizon {
		t.Fatalf("replay of a forgotten record: verdict %d, want pastHorizon", v)
	}
	if v := g.admit(id(5), "shop", 105); v != replayed {
		t.Fatalf("replay of a remembered record: verdict %d, want replayed", v)
	}
	if v := g.admit(id(9), "billing", 50); v != firstSight {
		t.Fatalf("another signer's older record: verdict %d, want firstSight", v)
	}
	// A record without a signed issued-at falls back to the window alone.
	if v := g.admit(id(10), "shop", 0); v != firstSight {
		t.Fatalf("unbound record: verdict %d", v)
	}
}
