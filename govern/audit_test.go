package govern_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// chain records n block decisions through w's gate and reads them back.
func (w *world) chain(n int) []govern.Entry {
	w.t.Helper()
	for i := range n {
		if _, err := w.c.Send(w.ctx, runtime.Out{Kind: wire.KindEvent, Topic: runtime.TopicCommands, From: "planner", Body: fmt.Appendf(nil, "wire-funds %d", i)}); err == nil {
			w.t.Fatal("a blocked effect ran")
		}
	}
	entries, err := govern.ReadAudit(w.ctx, w.tr, "")
	if err != nil {
		w.t.Fatal(err)
	}
	if len(entries) != n {
		w.t.Fatalf("read %d records, want %d", len(entries), n)
	}
	return entries
}

// only returns the one finding, failing unless there is exactly one.
func only(t *testing.T, fs []govern.Finding) govern.Finding {
	t.Helper()
	if len(fs) != 1 {
		t.Fatalf("findings %v, want exactly one", fs)
	}
	return fs[0]
}

func TestAnUntouchedChainVerifies(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{})
	entries := w.chain(5)
	if fs := govern.Verify(entries, govern.VerifyOptions{}); len(fs) != 0 {
		t.Fatalf("findings on an untouched chain: %v", fs)
	}
	for i, e := range entries {
		if e.Evidence.Seq != uint64(i+1) || (i > 0 && e.Evidence.Prev != entries[i-1].Evidence.Hash) {
			t.Fatalf("record %d: seq %d prev %q, want seq %d chained to its predecessor", i, e.Evidence.Seq, e.Evidence.Prev, i+1)
		}
	}
}

func TestARemovedRecordIsFoundWhereItWas(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{})
	entries := w.chain(5)
	f := only(t, govern.Verify(slices.Delete(slices.Clone(entries), 2, 3), govern.VerifyOptions{}))
	if f.Problem != govern.Removed || f.Index != 2 || f.Seq != 4 {
		t.Fatalf("finding %v, want seq 3 removed, found at the record now at index 2", f)
	}
}

func TestARemovedFirstRecordIsFound(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{})
	entries := w.chain(3)
	f := only(t, govern.Verify(entries[1:], govern.VerifyOptions{}))
	if f.Problem != govern.Removed || f.Index != 0 {
		t.Fatalf("finding %v, want the chain's head removed", f)
	}
}

func TestAReorderedRecordIsFoundWhereItWas(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{})
	entries := slices.Clone(w.chain(5))
	entries[1], entries[2] = entries[2], entries[1]
	fs := govern.Verify(entries, govern.VerifyOptions{})
	if len(fs) == 0 || fs[0].Problem != govern.Reordered || fs[0].Index != 1 {
		t.Fatalf("findings %v, want the swap found at index 1 first", fs)
	}
	for _, f := range fs {
		if f.Problem != govern.Reordered || f.Index > 2 {
			t.Fatalf("finding %v beyond the swapped pair", f)
		}
	}
}

func TestAnAlteredRecordIsFoundWhereItWas(t *testing.T) {
	t.Run("the reference's layout", func(t *testing.T) {
		w := governed(t, fixed(govern.Block("no")), govern.Config{})
		entries := slices.Clone(w.chain(5))
		altered := *entries[3].Policy
		altered.Outcome = string(govern.OutcomeEffected)
		entries[3].Policy = &altered
		f := only(t, govern.Verify(entries, govern.VerifyOptions{}))
		if f.Problem != govern.Altered || f.Index != 3 {
			t.Fatalf("finding %v, want the record at index 3 altered", f)
		}
	})
	t.Run("laser-go's layout", func(t *testing.T) {
		w := governed(t, fixed(govern.Block("no")), govern.Config{LaserGoLayout: true})
		entries := slices.Clone(w.chain(5))
		altered := *entries[3].Evidence
		altered.Outcome = govern.OutcomeEffected
		entries[3].Evidence = &altered
		f := only(t, govern.Verify(entries, govern.VerifyOptions{}))
		if f.Problem != govern.Altered || f.Index != 3 {
			t.Fatalf("finding %v, want the record at index 3 altered", f)
		}
	})
}

func TestAnAlteredRecordWithARecomputedHashBreaksTheNextLink(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{})
	entries := slices.Clone(w.chain(5))
	altered := *entries[2].Evidence
	altered.Reason = "allowed after all"
	altered.Hash, _ = altered.Digest()
	entries[2].Evidence = &altered
	f := only(t, govern.Verify(entries, govern.VerifyOptions{}))
	if f.Problem != govern.Altered || f.Index != 3 {
		t.Fatalf("finding %v, want the link from index 3 to its altered predecessor broken", f)
	}
}

func TestSignedEvidenceVerifiesAndATamperedBodyDoesNot(t *testing.T) {
	key := sign.NewKey([32]byte{7})
	keys := sign.NewRegistry()
	if err := keys.Enroll("governor", key.Public()); err != nil {
		t.Fatal(err)
	}
	w := governed(t, fixed(govern.Block("no")), govern.Config{Key: key})
	entries := slices.Clone(w.chain(3))
	if fs := govern.Verify(entries, govern.VerifyOptions{Keys: keys}); len(fs) != 0 {
		t.Fatalf("findings on signed evidence: %v", fs)
	}
	// Rewrite the second record's body whole, hash and all: only the
	// signature still tells.
	altered := *entries[1].Evidence
	altered.Verdict = govern.VerdictAllow
	altered.Hash, _ = altered.Digest()
	body, err := altered.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	env := *entries[1].Envelope
	env.Body = body
	entries[1].Envelope, entries[1].Evidence = &env, &altered
	fs := govern.Verify(entries, govern.VerifyOptions{Keys: keys})
	if len(fs) == 0 || fs[0].Problem != govern.Unverified || fs[0].Index != 1 {
		t.Fatalf("findings %v, want the record at index 1 unverified", fs)
	}
}

func TestEvidenceIsStampedByTheInjectedClock(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	w := governed(t, fixed(govern.Block("no")), govern.Config{Clock: lasertest.NewManualClock(at)})
	if _, err := w.emit(); err == nil {
		t.Fatal("a blocked effect ran")
	}
	if ev := w.onlyEvidence(); !ev.At.Equal(at) {
		t.Fatalf("evidence at %v, want the clock's %v", ev.At, at)
	}
}

func TestActivityCountsEachAgentsVerdictsAndKeepsTheLatest(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ev := func(agent string, v govern.Verdict, sec int, seq uint64) *govern.Evidence {
		return &govern.Evidence{Producer: "g", Seq: seq, Hash: fmt.Sprint(seq), Action: govern.Summary{Agent: agent}, Verdict: v, At: t0.Add(time.Duration(sec) * time.Second)}
	}
	late := ev("payer", govern.VerdictModify, 9, 3)
	evs := []*govern.Evidence{ev("payer", govern.VerdictBlock, 1, 1), late, ev("payer", govern.VerdictBlock, 5, 2), ev("clerk", govern.VerdictDefer, 2, 4)}
	evs = append(evs, evs[0]) // a replay counts once
	got := govern.Activity(evs)
	if len(got) != 2 || got[0].Agent != "payer" || got[1].Agent != "clerk" {
		t.Fatalf("activity %+v, want payer (busiest) then clerk", got)
	}
	p := got[0]
	if p.Decisions != 3 || p.ByVerdict[govern.VerdictBlock] != 2 || p.ByVerdict[govern.VerdictModify] != 1 || p.Latest != late {
		t.Fatalf("payer %+v, want 3 decisions (2 block, 1 modify), the latest the modify", p)
	}
}

// resign rewrites entry i's verdict to allow, reseals it and signs it with
// key as source.
func resign(t *testing.T, entries []govern.Entry, i int, key *sign.Key, source wire.AgentID) {
	t.Helper()
	altered := *entries[i].Evidence
	altered.Verdict = govern.VerdictAllow
	altered.Hash, _ = altered.Digest()
	body, err := altered.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	env := *entries[i].Envelope
	env.Body, env.Source, env.Signature = body, source, nil
	code, version := uint8(wire.ContentCBOR), wire.AgentOpVersion
	if err := key.Sign(&env, &wire.SignatureContext{ContentType: &code, AgentVersion: &version}); err != nil {
		t.Fatal(err)
	}
	entries[i].Envelope, entries[i].Evidence = &env, &altered
}

func TestEvidenceResignedByAnotherTrustedKeyIsReported(t *testing.T) {
	key, eve := sign.NewKey([32]byte{7}), sign.NewKey([32]byte{8})
	keys := sign.NewRegistry()
	if err := keys.Enroll("governor", key.Public()); err != nil {
		t.Fatal(err)
	}
	if err := keys.Enroll("eve", eve.Public()); err != nil {
		t.Fatal(err)
	}
	w := governed(t, fixed(govern.Block("no")), govern.Config{Key: key})
	entries := slices.Clone(w.chain(3))
	resign(t, entries, 1, eve, entries[1].Envelope.Source)
	fs := govern.Verify(entries, govern.VerifyOptions{Keys: keys})
	if len(fs) == 0 || fs[0].Problem != govern.Unverified || fs[0].Index != 1 {
		t.Fatalf("findings %v, want the record eve re-signed unverified", fs)
	}
}

func TestAChainResignedWholeUnderAnotherSourceFailsItsPinnedSigner(t *testing.T) {
	key, eve := sign.NewKey([32]byte{7}), sign.NewKey([32]byte{8})
	keys := sign.NewRegistry()
	if err := keys.Enroll("governor", key.Public()); err != nil {
		t.Fatal(err)
	}
	if err := keys.Enroll("eve", eve.Public()); err != nil {
		t.Fatal(err)
	}
	w := governed(t, fixed(govern.Block("no")), govern.Config{Key: key, Producer: "gate-1"})
	entries := slices.Clone(w.chain(2))
	for i := range entries {
		resign(t, entries, i, eve, "eve")
	}
	// Re-sealed whole, the chain links again; only the pinned signer tells.
	entries[1].Evidence.Prev = entries[0].Evidence.Hash
	entries[1].Evidence.Hash, _ = entries[1].Evidence.Digest()
	body, _ := entries[1].Evidence.Marshal()
	entries[1].Envelope.Body, entries[1].Envelope.Signature = body, nil
	code, version := uint8(wire.ContentCBOR), wire.AgentOpVersion
	if err := eve.Sign(entries[1].Envelope, &wire.SignatureContext{ContentType: &code, AgentVersion: &version}); err != nil {
		t.Fatal(err)
	}
	fs := govern.Verify(entries, govern.VerifyOptions{Keys: keys, Signers: map[string]string{"gate-1": "governor"}})
	if len(fs) != 2 || fs[0].Problem != govern.Unverified || fs[1].Problem != govern.Unverified {
		t.Fatalf("findings %v, want both records signed by eve unverified", fs)
	}
}

func TestARemovedTailIsReportedAgainstTheExpectedLastSeq(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{Producer: "gate-1"})
	entries := w.chain(4)
	if fs := govern.Verify(entries[:2], govern.VerifyOptions{}); len(fs) != 0 {
		t.Fatalf("findings %v: without an expectation a cut tail is not visible, as documented", fs)
	}
	f := only(t, govern.Verify(entries[:2], govern.VerifyOptions{Expect: map[string]uint64{"gate-1": 4}}))
	if f.Problem != govern.Removed || f.Producer != "gate-1" || f.Index != 2 || f.Seq != 4 {
		t.Fatalf("finding %v, want seq 3-4 removed at index 2", f)
	}
	if fs := govern.Verify(entries, govern.VerifyOptions{Expect: map[string]uint64{"gate-1": 4}}); len(fs) != 0 {
		t.Fatalf("findings %v on the whole chain", fs)
	}
}

func TestAWholeRemovedChainIsReportedWhenExpected(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{Producer: "gate-1"})
	entries := w.chain(2)
	f := only(t, govern.Verify(entries, govern.VerifyOptions{Expect: map[string]uint64{"gate-1": 2, "gate-2": 3}}))
	if f.Problem != govern.Removed || f.Producer != "gate-2" || f.Index != 0 {
		t.Fatalf("finding %v, want gate-2's chain removed", f)
	}
}

func TestEvidenceWithAFieldItDoesNotDefineDoesNotDecode(t *testing.T) {
	ev := govern.Evidence{Producer: "g", Seq: 1, Verdict: govern.VerdictBlock}
	body, err := ev.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := govern.DecodeEvidence(body); err != nil {
		t.Fatalf("a record as written: %v", err)
	}
	var fields map[string]any
	if err := cbor.Unmarshal(body, &fields); err != nil {
		t.Fatal(err)
	}
	fields["note"] = "smuggled"
	extra, err := cbor.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := govern.DecodeEvidence(extra); err == nil {
		t.Fatal("a record carrying a field evidence does not define decoded")
	}
}

// flood appends n copies of the audit topic's first record, its body
// replaced by size bytes, as anyone able to write the topic can.
func (w *world) flood(n, size int) {
	w.t.Helper()
	recs, err := w.tr.ReadRange(w.ctx, runtime.TopicAudit, 0, 0, 1)
	if err != nil || len(recs) != 1 {
		w.t.Fatalf("read the genuine decision: %d, %v", len(recs), err)
	}
	m, err := runtime.DecodeRecord(runtime.TopicAudit, &recs[0], 0)
	if err != nil {
		w.t.Fatal(err)
	}
	forged := *m.Envelope
	forged.Body = make([]byte, size)
	payload, err := forged.Marshal()
	if err != nil {
		w.t.Fatal(err)
	}
	for range n {
		if _, err := w.tr.Publish(w.ctx, runtime.TopicAudit, runtime.Outgoing{Headers: recs[0].Headers.Decode(), Payload: payload}); err != nil {
			w.t.Fatal(err)
		}
	}
}

func TestListAuditHoldsAtMostMaxEntries(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{})
	w.chain(1)
	w.flood(50, 64)
	l, err := govern.ListAudit(w.ctx, w.tr, govern.AuditOptions{MaxEntries: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 10 || l.Unread != 41 || l.Partial {
		t.Fatalf("held %d, unread %d, partial %v; want 10 held and 41 unread of 51", len(l.Entries), l.Unread, l.Partial)
	}
	if l.Entries[0].Evidence == nil {
		t.Fatal("the genuine first decision was not held first")
	}
}

func TestListAuditHoldsAtMostMaxBytes(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{})
	w.chain(1)
	w.flood(50, 4<<10)
	l, err := govern.ListAudit(w.ctx, w.tr, govern.AuditOptions{MaxBytes: 40 << 10})
	if err != nil {
		t.Fatal(err)
	}
	// The genuine decision is small; nine forged 4 KiB ones fit beside it.
	if len(l.Entries) != 10 || l.Unread != 41 {
		t.Fatalf("held %d, unread %d; want 10 held within 40 KiB and 41 unread", len(l.Entries), l.Unread)
	}
}

func TestListAuditReadsOnlyTheNewest(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{})
	w.chain(1)
	w.flood(20, 64)
	l, err := govern.ListAudit(w.ctx, w.tr, govern.AuditOptions{Newest: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 5 || l.Unread != 0 || !l.Partial || l.Entries[0].At.Offset != 16 {
		t.Fatalf("held %d from %v, unread %d, partial %v; want the 5 newest (from offset 16), partial", len(l.Entries), l.Entries[0].At, l.Unread, l.Partial)
	}
}

// A flood of forged decisions past ReadAudit's byte bound is an error
// naming the bound, not memory growing with the flood.
func TestReadAuditRefusesATopicPastItsBound(t *testing.T) {
	w := governed(t, fixed(govern.Block("no")), govern.Config{})
	w.chain(1)
	w.flood(govern.DefaultMaxAuditBytes/(1<<20)+1, 1<<20)
	entries, err := govern.ReadAudit(w.ctx, w.tr, "")
	if !errors.Is(err, govern.ErrAuditBound) || entries != nil {
		t.Fatalf("ReadAudit over %d MiB of decisions: %d entries, %v; want ErrAuditBound", govern.DefaultMaxAuditBytes>>20, len(entries), err)
	}
}
