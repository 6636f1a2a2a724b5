package conversation_test

import (
	"hash/fnv"
	"strings"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/wire"
)

// The vectors were computed outside Go from the definition in the runtime
// notes (FNV-1a 64 over [version 1, salt, key bytes...], salts 0x1d high and
// 0x9e low, concatenated into a ULID). "user-1" is also the id the reference
// runtime pins in its own test.
var deriveVectors = []struct {
	key    string
	hi, lo uint64
	text   string
}{
	{"user-1", 0xdd26e88409236592, 0xb7cc712a34fa5327, "6X4VM88293CP9BFK3H58TFMMS7"},
	{"", 0x082f2707b4e89543, 0x082fa807b4e97076, "085WKGFD78JN1GGBX80YTEJW3P"},
	{"alice", 0x8c1d8824b4e46d65, 0xe3f7b9b1c8f6e9fe, "4C3P429D74DNJY7XXSP74FDTFY"},
	{"bob", 0xd2d56ad7b148c0a2, 0x42fd6f09e5fe5691, "6JTNNDFCA8R2H45ZBF17JZWNMH"},
	{"planner+eu@acme.example", 0xf395e377530481a2, 0x721983a567f91c2d, "7KJQHQEMR4G6H746C3MNKZJ71D"},
	{"héllo", 0x6c46bb48bd975ec6, 0x08037e9b016cfb4b, "3C8TXMHFCQBV30G0VYKC0PSYTB"},
	{strings.Repeat("0", 300), 0x552b04008e85c293, 0x34cc6d7fe70b3f96, "2N5C2013M5RA9K9K3DFZKGPFWP"},
}

func TestDeriveMatchesTheReferenceVectors(t *testing.T) {
	for _, v := range deriveVectors {
		got := conversation.Derive(v.key)
		hi, lo := got.Uint128()
		if hi != v.hi || lo != v.lo || got.String() != v.text {
			t.Errorf("Derive(%.20q) = %016x%016x %s, want %016x%016x %s", v.key, hi, lo, got, v.hi, v.lo, v.text)
		}
	}
}

// TestDeriveAgreesWithTheStandardLibraryFNV cross-checks the hand-rolled
// hash against hash/fnv over the same byte sequence, for many keys.
func TestDeriveAgreesWithTheStandardLibraryFNV(t *testing.T) {
	sum := func(salt byte, key string) uint64 {
		h := fnv.New64a()
		h.Write([]byte{1, salt})
		h.Write([]byte(key))
		return h.Sum64()
	}
	for i := range 500 {
		key := strings.Repeat(string(rune('a'+i%26)), i%40) + string(rune(i))
		hi, lo := conversation.Derive(key).Uint128()
		if hi != sum(0x1d, key) || lo != sum(0x9e, key) {
			t.Fatalf("Derive(%q) disagrees with hash/fnv", key)
		}
	}
}

func TestPerUserSessionMapsAKeyToOneConversation(t *testing.T) {
	a1 := conversation.PerUser.ConversationFor("alice", nil)
	a2 := conversation.PerUser.ConversationFor("alice", nil)
	b := conversation.PerUser.ConversationFor("bob", nil)
	if a1 != a2 || a1 != conversation.Derive("alice") {
		t.Fatalf("alice mapped to %s and %s", a1, a2)
	}
	if a1 == b {
		t.Fatal("alice and bob share a conversation")
	}
}

type countingIDs struct{ n uint64 }

func (c *countingIDs) NewID() wire.ID { c.n++; return wire.IDFromUint128(7, c.n) }

func TestPerCallSessionMintsAFreshConversationEachCall(t *testing.T) {
	ids := &countingIDs{}
	a := conversation.PerCall.ConversationFor("alice", ids)
	b := conversation.PerCall.ConversationFor("alice", ids)
	if a == b || a != wire.IDFromUint128(7, 1) || b != wire.IDFromUint128(7, 2) {
		t.Fatalf("per-call gave %s then %s", a, b)
	}
	if c, d := conversation.PerCall.ConversationFor("x", nil), conversation.PerCall.ConversationFor("x", nil); c == d {
		t.Fatal("default id source repeated an id")
	}
	var _ clock.IDSource = ids
}
