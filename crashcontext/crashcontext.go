// Package crashcontext answers "what was happening right before this
// crashed" for one conversation in one call: the tail of its journal under
// a context policy, the newest dead-letter capsule of one of its messages,
// and the newest governance decision about it, read from the log and put
// side by side so a recovery tool or the console need not stitch the reads
// together. It reads only; it never decides what to do with what it found.
package crashcontext

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/deadletter"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// ErrUnknownConversation is the error of a conversation with nothing on
// the log: no journal record, no dead letter and no decision.
var ErrUnknownConversation = errors.New("crashcontext: the conversation has no record on the log")

// Options say where and how much to read; a zero field takes its default.
type Options struct {
	// Journal is how the journal is assembled; its Policy defaults to
	// conversation.DefaultPolicy (the last 50 records) and its Topics to
	// conversation.DefaultTopics.
	Journal conversation.Options
	// DeadLetterTopic is where capsules are read (default agent.dlq).
	DeadLetterTopic string
	// AuditTopic is where decisions are read (default agent.audit).
	AuditTopic string
	// MaxAuditBytes bounds the decision record bytes held while looking
	// for the last decision (default govern.DefaultMaxAuditBytes); past it
	// the rest are not read and Context.DecisionsCut says so.
	MaxAuditBytes int
	// Keys, when set, verify what is read: the journal keeps only records
	// whose signature verifies (they become Journal.Verifier unless it is
	// set), and a dead-letter capsule counts only when its signature
	// verifies as a redrive checks it (deadletter.Verify); the ones that
	// do not are left out and counted in Context.Refused. The signature
	// covers the parked message, not the conversation header the capsule
	// is filed under: a parked envelope must be of the conversation read
	// (DeadLetter.Signed), and a plain message's provenance stays
	// unverified. Decisions
	// are shown as read: their chain is checked by govern.Verify.
	Keys *sign.Registry
}

// DeadLetter is a capsule found on the dead-letter topic.
type DeadLetter struct {
	At         runtime.Position // where the capsule sits on the dead-letter topic
	Capsule    *wire.DeadLetter
	Provenance wire.Provenance // the parked message's, as the capsule carries it
	// Signed says Options.Keys verified the capsule and what it parked is
	// an AGDX envelope of this conversation, which the signature covers.
	// A plain message's provenance travels in headers no signature
	// covers, so it is never Signed: show it as unverified.
	Signed bool
}

// Context is what was happening in a conversation right before a crash.
type Context struct {
	Conversation wire.ID
	// Journal is the conversation's recent history, oldest first.
	Journal conversation.History
	// DeadLetter is the newest capsule of one of the conversation's
	// messages, nil when none was parked.
	DeadLetter *DeadLetter
	// LastDecision is the newest governance decision about the
	// conversation, nil when none was recorded.
	LastDecision *govern.Entry
	// DecisionsCut says decisions past Options.MaxAuditBytes were not
	// read, so a newer decision than LastDecision may exist.
	DecisionsCut bool
	// Verified says Options.Keys verified the journal and the dead letter.
	Verified bool
	// Refused counts the capsules filed under the conversation that were
	// left out: their signature did not verify with Options.Keys, or the
	// envelope they parked is of another conversation (a replayed
	// capsule).
	Refused int
}

// Read assembles the crash context of conv from t. Each part is read from
// its own topic (the topics Client.Bootstrap creates); a conversation with
// none of them fails with ErrUnknownConversation.
func Read(ctx context.Context, t runtime.Transport, conv wire.ID, opts Options) (*Context, error) {
	if conv == (wire.ID{}) {
		return nil, errors.New("crashcontext: zero conversation id")
	}
	out := &Context{Conversation: conv, Verified: opts.Keys != nil}
	journal := opts.Journal
	if opts.Keys != nil && journal.Verifier == nil {
		journal.Verifier = opts.Keys
	}
	var err error
	if out.Journal, err = conversation.Assemble(ctx, t, conv, journal); err != nil {
		return nil, fmt.Errorf("crashcontext: journal of %s: %w", conv, err)
	}
	if out.DeadLetter, out.Refused, err = lastDeadLetter(ctx, t, cmp.Or(opts.DeadLetterTopic, runtime.TopicDLQ), conv, opts.Keys); err != nil {
		return nil, err
	}
	if out.LastDecision, out.DecisionsCut, err = lastDecision(ctx, t, cmp.Or(opts.AuditTopic, runtime.TopicAudit), conv, opts.MaxAuditBytes); err != nil {
		return nil, err
	}
	if len(out.Journal) == 0 && out.DeadLetter == nil && out.LastDecision == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownConversation, conv)
	}
	return out, nil
}

// lastDeadLetter returns the newest capsule on topic whose parked message
// belongs to conv (by broker time, then position), or nil, and how many of
// conv's capsules keys refused (with keys set, only a capsule whose
// signature verifies counts). Like the journal it reads at most
// conversation.Window records from each partition's tail, so a long
// dead-letter topic costs a bounded read. A capsule filed under conv whose
// parked envelope is of another conversation is refused too.
func lastDeadLetter(ctx context.Context, t runtime.Transport, topic string, conv wire.ID, keys *sign.Registry) (*DeadLetter, int, error) {
	from, err := tailWindow(ctx, t, topic)
	if err != nil {
		return nil, 0, fmt.Errorf("crashcontext: dead letters on %s: %w", topic, err)
	}
	var last *DeadLetter
	var lastAt uint64
	refused := 0
	_, err = logscan.Topic(ctx, t, topic, from, func(rec *runtime.Incoming) {
		prov, err := wire.DecodeProvenance(rec.Headers)
		if err != nil || prov.Conversation != conv {
			return
		}
		capsule, err := wire.DecodeDeadLetter(rec.Payload)
		if err != nil {
			return // not a capsule: nothing to show
		}
		// The capsule's signature covers what it parked but not the
		// headers it is filed under: a genuine capsule replayed under
		// this conversation parks an envelope of another one.
		env, envErr := wire.DecodeEnvelope(capsule.Payload)
		if envErr == nil && env.Conversation != conv {
			refused++
			return
		}
		if keys != nil {
			if _, _, err := deadletter.Verify(keys, topic, rec); err != nil {
				refused++
				return
			}
		}
		if last == nil || rec.Timestamp > lastAt || (rec.Timestamp == lastAt && later(rec.Position, last.At)) {
			signed := keys != nil && envErr == nil
			last, lastAt = &DeadLetter{At: rec.Position, Capsule: capsule, Provenance: prov, Signed: signed}, rec.Timestamp
		}
	})
	if err != nil {
		return nil, 0, fmt.Errorf("crashcontext: dead letters on %s: %w", topic, err)
	}
	return last, refused, nil
}

// tailWindow returns, for each partition of topic, the offset
// conversation.Window records before its tail.
func tailWindow(ctx context.Context, t runtime.Transport, topic string) (map[uint32]uint64, error) {
	n, err := t.Partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	from := make(map[uint32]uint64, n)
	for p := range n {
		next, err := t.NextOffset(ctx, topic, p)
		if err != nil {
			return nil, err
		}
		from[p] = next - min(next, conversation.Window)
	}
	return from, nil
}

func later(a, b runtime.Position) bool {
	return a.Partition > b.Partition || (a.Partition == b.Partition && a.Offset > b.Offset)
}

// lastDecision returns the newest decision on topic about conv, or nil,
// read from the newest conversation.Window records of each partition as
// the dead letters are, so a long audit topic costs a bounded read.
func lastDecision(ctx context.Context, t runtime.Transport, topic string, conv wire.ID, maxBytes int) (*govern.Entry, bool, error) {
	l, err := govern.ListAudit(ctx, t, govern.AuditOptions{Topic: topic, Newest: conversation.Window, MaxBytes: maxBytes})
	if err != nil {
		return nil, false, fmt.Errorf("crashcontext: decisions on %s: %w", topic, err)
	}
	entries := l.Entries
	var last *govern.Entry
	for i := range entries {
		e := &entries[i]
		if e.Evidence == nil || e.Envelope == nil || e.Envelope.Conversation != conv {
			continue
		}
		if last == nil || e.Evidence.At.After(last.Evidence.At) {
			last = e
		}
	}
	return last, l.Unread > 0, nil
}

// previewRunes is how much of a payload Summary shows.
const previewRunes = 120

// Summary renders the context as plain text in a fixed order (journal,
// dead letter, last decision), the same every time for the same context:
// for a log line or a recovery agent's own prompt. What peers wrote (agent
// names, bodies, reasons) is quoted, so it can carry no control sequence to
// a terminal.
func (c *Context) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "conversation %s\n", c.Conversation)
	fmt.Fprintf(&b, "journal (%d, oldest first)\n", len(c.Journal))
	for _, m := range c.Journal {
		fmt.Fprintf(&b, "  %s %s %q: %s\n", m.Topic, m.Position, m.Provenance.Agent, preview(m.Body()))
	}
	if dl := c.DeadLetter; dl != nil {
		detail := ""
		if dl.Capsule.Detail != nil {
			detail = fmt.Sprintf(": %q", *dl.Capsule.Detail)
		}
		fmt.Fprintf(&b, "dead letter at %s: %s after %d attempts%s\n  payload: %s\n",
			dl.At, dl.Capsule.Reason, dl.Capsule.Attempts, detail, preview(dl.Capsule.Payload))
		if c.Verified && !dl.Signed {
			b.WriteString("  provenance: unverified (a plain message: no signature covers its headers)\n")
		}
	} else {
		b.WriteString("dead letter: none\n")
	}
	if e := c.LastDecision; e != nil {
		ev := e.Evidence
		fmt.Fprintf(&b, "last decision at %s: %q %q on %q by %q", e.At, ev.Outcome, ev.Action.Kind, ev.Action.Topic, ev.Action.Agent)
		if ev.Reason != "" {
			fmt.Fprintf(&b, " (%q)", ev.Reason)
		}
		b.WriteByte('\n')
	} else {
		b.WriteString("last decision: none\n")
	}
	return b.String()
}

// preview is the start of a body as one line of valid text.
func preview(body []byte) string {
	s := strings.ToValidUTF8(string(body), "\uFFFD")
	if utf8.RuneCountInString(s) > previewRunes {
		s = string([]rune(s)[:previewRunes]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
