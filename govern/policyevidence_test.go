package govern_test

import (
	"testing"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// A gate writing the reference's layout keeps a laser-go chain: its records
// decode as PolicyEvidence with a BLAKE3 digest chained by previous_digest,
// carry producer and seq, and a removed record or cut tail is reported.
func TestReferenceLayoutKeepsTheChain(t *testing.T) {
	w := governed(t, fixed(govern.Decision{Verdict: govern.VerdictBlock, Reason: "no"}), govern.Config{Producer: "p", ReferenceLayout: true})
	for range 3 {
		_, _ = w.c.Send(w.ctx, runtime.Out{Kind: wire.KindEvent, Topic: "agent.events", From: "planner", Body: []byte("x")})
	}
	entries, err := govern.ReadAudit(w.ctx, w.tr, runtime.TopicAudit)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("read %d decisions, want 3", len(entries))
	}
	for i, e := range entries {
		if e.Policy == nil || e.Evidence == nil || e.Evidence.Producer != "p" || e.Evidence.Seq != uint64(i+1) {
			t.Fatalf("decision %d read as %+v / %+v (%v), want seq %d of p in the reference's layout", i, e.Policy, e.Evidence, e.Err, i+1)
		}
		if e.Policy.Decision != "block" || e.Policy.Outcome != "blocked" || e.Policy.Reason != "no" || len(e.Policy.ReceiptDigest) != 64 {
			t.Fatalf("decision %d: %+v", i, e.Policy)
		}
		if i > 0 && e.Policy.PreviousDigest != entries[i-1].Policy.ReceiptDigest {
			t.Fatalf("decision %d does not name its predecessor's digest", i)
		}
	}
	if f := govern.Verify(entries, govern.VerifyOptions{Expect: map[string]uint64{"p": 3}}); len(f) != 0 {
		t.Fatalf("findings on an untouched chain: %v", f)
	}
	cut := []govern.Entry{entries[0], entries[2]}
	if f := govern.Verify(cut, govern.VerifyOptions{}); len(f) != 1 || f[0].Problem != govern.Removed || f[0].Seq != 3 {
		t.Fatalf("findings %v, want seq 2 reported removed at seq 3", f)
	}
	if f := govern.Verify(entries[:2], govern.VerifyOptions{Expect: map[string]uint64{"p": 3}}); len(f) != 1 || f[0].Problem != govern.Removed {
		t.Fatalf("findings %v, want the cut tail reported", f)
	}
}
