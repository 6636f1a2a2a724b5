package govern

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Entry is one decision record read off the audit topic.
type Entry struct {
	At       runtime.Position
	Envelope *wire.Envelope
	// Evidence is the decoded record; nil when the body does not decode,
	// and Err says why.
	Evidence *Evidence
	// Policy is the decoded record when it is in the reference's layout:
	// a reference agent's decision (Evidence nil), or a laser-go gate's
	// (the default layout; Evidence is its chain view).
	Policy *PolicyEvidence
	Err    error
}

// The bounds of ListAudit unless its options say otherwise.
const (
	// DefaultMaxAuditEntries is how many decision records ListAudit holds.
	DefaultMaxAuditEntries = 100_000
	// DefaultMaxAuditBytes is how many record bytes the held decisions may
	// take.
	DefaultMaxAuditBytes = 64 << 20
)

// ErrAuditBound is the error ReadAudit returns for a topic holding more
// decisions than its bounds: read it with ListAudit and larger bounds, or
// Newest.
var ErrAuditBound = errors.New("govern: the audit topic holds more decision records than the read is bounded to")

// AuditOptions says which decision records ListAudit reads and how many it
// holds.
type AuditOptions struct {
	// Topic is the audit topic. Default agent.audit.
	Topic string
	// Newest, when positive, reads only the newest Newest records of each
	// partition instead of the whole topic (a chain then starts mid-way, so
	// Verify reports the records before the window as removed).
	Newest int
	// MaxEntries bounds the decision records held. Default
	// DefaultMaxAuditEntries.
	MaxEntries int
	// MaxBytes bounds the record bytes of the decisions held. Default
	// DefaultMaxAuditBytes.
	MaxBytes int
}

// AuditLog is what ListAudit read.
type AuditLog struct {
	// Entries are the decision records held, in log order per partition:
	// the first ones read until a bound was reached.
	Entries []Entry
	// Unread counts the decision records read past a bound and not held.
	Unread int
	// Partial says a partition was read from a later offset than its first
	// (Newest), so chains may start before what Entries holds.
	Partial bool
}

// ListAudit reads the decision records on opts.Topic, in log order per
// partition, holding at most opts.MaxEntries of them and opts.MaxBytes of
// their bytes, so a topic flooded with forged decisions costs bounded
// memory; the records past a bound are counted in Unread. Other records on
// the topic are skipped.
func ListAudit(ctx context.Context, t runtime.Transport, opts AuditOptions) (*AuditLog, error) {
	topic := cmp.Or(opts.Topic, runtime.TopicAudit)
	maxEntries, maxBytes := positive(opts.MaxEntries, DefaultMaxAuditEntries), positive(opts.MaxBytes, DefaultMaxAuditBytes)
	out := &AuditLog{}
	var from map[uint32]uint64
	if opts.Newest > 0 {
		var err error
		if from, err = newestOffsets(ctx, t, topic, opts.Newest); err != nil {
			return nil, fmt.Errorf("govern: %w", err)
		}
		for _, f := range from {
			out.Partial = out.Partial || f > 0
		}
	}
	held := 0
	_, err := logscan.Topic(ctx, t, topic, from, func(rec *runtime.Incoming) {
		m, ok := governanceEvent(topic, rec)
		if !ok || *m.Envelope.Operation != OperationDecision {
			return
		}
		if len(out.Entries) >= maxEntries || held+len(rec.Payload) > maxBytes {
			out.Unread++
			return
		}
		held += len(rec.Payload)
		env := m.Envelope
		e := Entry{At: rec.Position, Envelope: env}
		e.Evidence, e.Err = DecodeEvidence(env.Body)
		if e.Err != nil {
			if p, err := DecodePolicyEvidence(env.Body); err == nil {
				e.Evidence, e.Policy, e.Err = nil, p, nil
				if ev, ok := chainOf(p); ok {
					e.Evidence = ev
				}
			}
		}
		out.Entries = append(out.Entries, e)
	})
	if err != nil {
		return nil, fmt.Errorf("govern: %w", err)
	}
	return out, nil
}

// ReadAudit reads every decision record on topic (default agent.audit), in
// log order per partition, within ListAudit's default bounds. Other records
// on the topic are skipped. A topic holding more decisions than the bounds
// is an error matching ErrAuditBound, never a silently partial read.
func ReadAudit(ctx context.Context, t runtime.Transport, topic string) ([]Entry, error) {
	l, err := ListAudit(ctx, t, AuditOptions{Topic: topic})
	if err != nil {
		return nil, err
	}
	if l.Unread > 0 {
		return nil, fmt.Errorf("%w: %d held (%d or %d bytes at most), %d more not read", ErrAuditBound, len(l.Entries), DefaultMaxAuditEntries, DefaultMaxAuditBytes, l.Unread)
	}
	return l.Entries, nil
}

// newestOffsets is where reading the newest n records of each partition of
// topic starts.
func newestOffsets(ctx context.Context, t runtime.Transport, topic string, n int) (map[uint32]uint64, error) {
	parts, err := t.Partitions(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", topic, err)
	}
	from := make(map[uint32]uint64, parts)
	for p := range parts {
		next, err := t.NextOffset(ctx, topic, p)
		if err != nil {
			return nil, fmt.Errorf("scan %s/%d: %w", topic, p, err)
		}
		from[p] = next - min(next, uint64(n))
	}
	return from, nil
}

func positive(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// Problem is what Verify found wrong with a record.
type Problem string

// Problems.
const (
	// Removed: records of the chain are missing before this one.
	Removed Problem = "removed"
	// Reordered: this record is out of its chain's order.
	Reordered Problem = "reordered"
	// Altered: this record is not what its producer wrote (its hash, its
	// predecessor's hash or its body no longer match).
	Altered Problem = "altered"
	// Unverified: the record's signature is missing or does not verify.
	Unverified Problem = "unverified"
)

// Finding is one break Verify found: in which chain, at which record.
type Finding struct {
	Producer string
	// Index is the record's zero-based position in its chain as read.
	Index int
	// At is where the record sits on the log.
	At      runtime.Position
	Seq     uint64
	Problem Problem
	Detail  string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s record %d (seq %d, at %s): %s: %s", f.Producer, f.Index, f.Seq, f.At, f.Problem, f.Detail)
}

// VerifyOptions says what Verify checks beyond the chains.
type VerifyOptions struct {
	// Keys, when set, makes every record's signature mandatory, by a key
	// whose principal may send as the record's source and the same
	// principal for the whole chain.
	Keys *sign.Registry
	// Signers pins the principal that must sign each producer's chain
	// (producer name to principal); a chain not named here must be signed
	// throughout by the principal of its first record.
	Signers map[string]string
	// Expect is the last seq each named producer is known to have written
	// (from a checkpoint kept elsewhere): a chain that ends before it, or
	// is missing, is reported Removed. Without it a chain's tail, or a
	// whole chain, can be removed unnoticed, since nothing after it breaks.
	Expect map[string]uint64
}

// Verify checks the chains of entries (as ReadAudit returns them) and
// returns every break, in chain and then record order; none means every
// producer's records are complete, in order and unaltered. A chain must
// start at seq 1, count up by one, and carry its predecessor's hash.
// Reference decisions (Entry.Policy) chain per source and conversation
// with no sequence number (see verifyReferenceChain), so for them a cut
// tail, or a cut before a chain's restart, goes unnoticed; Expect does not
// apply to them.
func Verify(entries []Entry, opts VerifyOptions) []Finding {
	chains := map[string][]Entry{}
	var producers []string
	var findings []Finding
	references := map[string][]Entry{}
	for _, e := range entries {
		if e.Policy != nil && e.Evidence == nil {
			c := e.Policy.Chain()
			if _, ok := references[c]; !ok {
				producers = append(producers, c)
			}
			references[c] = append(references[c], e)
			continue
		}
		if e.Evidence == nil {
			findings = append(findings, Finding{Producer: "?", At: e.At, Problem: Altered, Detail: fmt.Sprint(e.Err)})
			continue
		}
		p := e.Evidence.Producer
		if _, ok := chains[p]; !ok {
			producers = append(producers, p)
		}
		chains[p] = append(chains[p], e)
	}
	for p := range opts.Expect {
		if _, ok := chains[p]; !ok {
			producers = append(producers, p)
		}
	}
	slices.Sort(producers)
	for _, p := range producers {
		if chain, ok := references[p]; ok {
			findings = append(findings, verifyReferenceChain(p, chain, opts)...)
			continue
		}
		findings = append(findings, verifyChain(p, chains[p], opts)...)
		findings = append(findings, verifyTail(p, chains[p], opts.Expect)...)
	}
	return findings
}

// verifyTail reports a chain that ends before the seq expect names for it.
func verifyTail(producer string, chain []Entry, expect map[string]uint64) []Finding {
	want, ok := expect[producer]
	if !ok {
		return nil
	}
	var last uint64
	for _, e := range chain {
		last = max(last, e.Evidence.Seq)
	}
	if last >= want {
		return nil
	}
	detail := fmt.Sprintf("seq %s missing at the end: the chain ends at seq %d", span(last+1, want), last)
	if len(chain) == 0 {
		detail = fmt.Sprintf("the whole chain is missing (seq %s)", span(1, want))
	}
	return []Finding{{Producer: producer, Index: len(chain), Seq: want, Problem: Removed, Detail: detail}}
}

// verifyChain checks one producer's records; after a break it resumes from
// the record that broke, so one tampering is reported where it happened.
func verifyChain(producer string, chain []Entry, opts VerifyOptions) []Finding {
	var out []Finding
	report := func(i int, pr Problem, format string, args ...any) {
		ev := chain[i].Evidence
		out = append(out, Finding{Producer: producer, Index: i, At: chain[i].At, Seq: ev.Seq, Problem: pr, Detail: fmt.Sprintf(format, args...)})
	}
	want, prev := uint64(1), ""
	signer := opts.Signers[producer]
	for i, e := range chain {
		ev := e.Evidence
		if opts.Keys != nil {
			if msg := checkSigner(opts.Keys, e.Envelope, &signer); msg != "" {
				report(i, Unverified, "%s", msg)
			}
		}
		if !sealed(e) {
			report(i, Altered, "its hash does not match its content")
		}
		switch {
		case ev.Seq < want:
			report(i, Reordered, "seq %d after seq %d", ev.Seq, want-1)
		case ev.Seq > want && comesLater(want, ev.Seq, chain[i+1:]):
			report(i, Reordered, "seq %d where seq %d was expected, which comes later", ev.Seq, want)
		case ev.Seq > want:
			report(i, Removed, "seq %s missing before seq %d", span(want, ev.Seq-1), ev.Seq)
		case ev.Prev != prev:
			report(i, Altered, "it does not carry its predecessor's hash: it or its predecessor was changed")
		}
		if ev.Seq >= want {
			want, prev = ev.Seq+1, ev.Hash
		}
	}
	return out
}

// sealed reports whether a laser-go decision's digest matches its content,
// in whichever layout it was written.
func sealed(e Entry) bool {
	if e.Policy != nil {
		digest, err := e.Policy.Digest()
		return err == nil && digest == e.Policy.ReceiptDigest
	}
	digest, err := e.Evidence.Digest()
	return err == nil && digest == e.Evidence.Hash
}

// verifyReferenceChain checks the reference decisions of one source and
// conversation: each digest must match its record, and a record naming a
// predecessor must follow a record of the chain with that digest (one
// later on the log is Reordered, none at all Removed). A record without a
// predecessor starts the chain again, as a restarted reference process
// does. Under Keys the signer is pinned as for laser-go's chains, by
// Signers under the chain's name or its source, else by its first record.
func verifyReferenceChain(name string, chain []Entry, opts VerifyOptions) []Finding {
	var out []Finding
	report := func(i int, pr Problem, format string, args ...any) {
		out = append(out, Finding{Producer: name, Index: i, At: chain[i].At, Problem: pr, Detail: fmt.Sprintf(format, args...)})
	}
	signer := cmp.Or(opts.Signers[name], opts.Signers[chain[0].Policy.Source])
	read := map[string]bool{}
	for i, e := range chain {
		ev := e.Policy
		if opts.Keys != nil {
			if msg := checkSigner(opts.Keys, e.Envelope, &signer); msg != "" {
				report(i, Unverified, "%s", msg)
			}
		}
		if digest, err := ev.Digest(); err != nil || digest != ev.ReceiptDigest {
			report(i, Altered, "its digest does not match its content")
		}
		if prev := ev.PreviousDigest; prev != "" && !read[prev] {
			if slices.ContainsFunc(chain[i+1:], func(l Entry) bool { return l.Policy.ReceiptDigest == prev }) {
				report(i, Reordered, "its predecessor %s comes after it", prev)
			} else {
				report(i, Removed, "its predecessor %s is missing", prev)
			}
		}
		read[ev.ReceiptDigest] = true
	}
	return out
}

// checkSigner says what is wrong with env's signature, "" when nothing: it
// must verify, its principal may send as env's source, and it must be
// *signer, which the chain's first verified record sets when empty. Any
// trusted key re-signing a rewritten record would otherwise pass.
func checkSigner(keys *sign.Registry, env *wire.Envelope, signer *string) string {
	v, err := keys.Verify(env)
	if err != nil {
		return err.Error()
	}
	if err := keys.CheckSource(v, env); err != nil {
		return err.Error()
	}
	if *signer == "" {
		*signer = v.Principal
	}
	if v.Principal != *signer {
		return fmt.Sprintf("signed by %q, the chain's signer is %q", v.Principal, *signer)
	}
	return ""
}

// comesLater reports whether a seq in [from, to) appears in rest.
func comesLater(from, to uint64, rest []Entry) bool {
	for _, e := range rest {
		if s := e.Evidence.Seq; s >= from && s < to {
			return true
		}
	}
	return false
}

func span(from, to uint64) string {
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d-%d", from, to)
}
