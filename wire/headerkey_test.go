package wire

import "testing"

func TestHeaderKeyInternsKnownKeysWithoutAllocating(t *testing.T) {
	for _, k := range []string{HeaderAgentVersion, HeaderConversationID, HeaderIdempotencyKey, HeaderDelegatedBy} {
		b := []byte(k)
		if got := HeaderKey(b); got != k {
			t.Fatalf("HeaderKey(%q) = %q", k, got)
		}
		if n := testing.AllocsPerRun(100, func() { _ = HeaderKey(b) }); n != 0 {
			t.Fatalf("HeaderKey(%q) allocates %v times", k, n)
		}
	}
	if got := HeaderKey([]byte("x-custom")); got != "x-custom" {
		t.Fatalf("unknown key: %q", got)
	}
}
