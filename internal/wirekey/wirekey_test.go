package wirekey

import (
	"testing"

	"github.com/lasergo/laser/wire"
)

func TestInternInternsKnownKeysWithoutAllocating(t *testing.T) {
	for _, k := range []string{wire.HeaderAgentVersion, wire.HeaderConversationID, wire.HeaderIdempotencyKey, wire.HeaderDelegatedBy} {
		b := []byte(k)
		if got := Intern(b); got != k {
			t.Fatalf("Intern(%q) = %q", k, got)
		}
		if n := testing.AllocsPerRun(100, func() { _ = Intern(b) }); n != 0 {
			t.Fatalf("Intern(%q) allocates %v times", k, n)
		}
	}
	if got := Intern([]byte("x-custom")); got != "x-custom" {
		t.Fatalf("unknown key: %q", got)
	}
}
