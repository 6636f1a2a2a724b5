package govern_test

import (
	"slices"
	"testing"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// A gate writes the reference's layout by default and keeps a laser-go
// chain: its records decode as PolicyEvidence with a BLAKE3 digest chained
// by previous_digest, carry producer and seq in the body, and a removed
// record or cut tail is reported.
func TestReferenceLayoutKeepsTheChain(t *testing.T) {
	w := governed(t, fixed(govern.Decision{Verdict: govern.VerdictBlock, Reason: "no"}), govern.Config{Producer: "p"})
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
		if e.Policy.Producer != "p" || e.Policy.Seq != uint64(i+1) {
			t.Fatalf("decision %d carries producer %q seq %d in its body, want p and %d", i, e.Policy.Producer, e.Policy.Seq, i+1)
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

// The chain's producer and seq ride in the body of a reference-layout
// record, under its digest: changing them is found.
func TestAChangedSeqInTheReferenceLayoutIsAltered(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{Producer: "p"})
	entries := slices.Clone(w.chain(3))
	pe, ev := *entries[2].Policy, *entries[2].Evidence
	pe.Seq, ev.Seq = 7, 7
	entries[2].Policy, entries[2].Evidence = &pe, &ev
	fs := govern.Verify(entries, govern.VerifyOptions{})
	if !slices.ContainsFunc(fs, func(f govern.Finding) bool { return f.Problem == govern.Altered && f.Index == 2 }) {
		t.Fatalf("findings %v, want the record with a changed seq altered", fs)
	}
}

// laser-go's own layout is still written on request and read.
func TestLaserGoLayoutStillWrittenAndRead(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{Producer: "p", LaserGoLayout: true})
	entries := w.chain(2)
	for i, e := range entries {
		if e.Policy != nil || e.Evidence == nil || e.Evidence.Seq != uint64(i+1) || len(e.Evidence.Hash) != 64 {
			t.Fatalf("decision %d read as %+v / %+v, want laser-go's layout at seq %d", i, e.Policy, e.Evidence, i+1)
		}
	}
	if f := govern.Verify(entries, govern.VerifyOptions{Expect: map[string]uint64{"p": 3}}); len(f) != 1 || f[0].Problem != govern.Removed {
		t.Fatalf("findings %v, want the cut tail reported", f)
	}
}
