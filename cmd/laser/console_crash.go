package main

import (
	"context"
	"errors"
	"strings"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/crashcontext"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// crashJournalRecords is how many journal records the conversation page's
// crash context shows, as laser crash does by default.
const crashJournalRecords = 20

// crashSection is the conversation page's crash context: what
// crashcontext.Read bundles, rendered within the page's body budget.
type crashSection struct {
	// Found is false when the journal, dead-letter and audit topics hold
	// nothing of the conversation.
	Found bool
	// Journal is the tail of the conversation's journal, oldest first.
	Journal    []recordRow
	DeadLetter *crashCapsule
	Decision   *crashDecision
	// DecisionsCut says decisions past the page's bound were not read.
	DecisionsCut bool
	// Verified says the console's keys (--keys) checked the journal's and
	// the capsule's signatures; Refused counts capsules that failed.
	Verified bool
	Refused  int
	// Error is why the crash context could not be read.
	Error string
}

// crashCapsule is the newest dead letter of the conversation and the
// message it parked.
type crashCapsule struct {
	Topic    string
	Capsule  string
	Reason   string
	Attempts uint32
	Detail   string
	Parked   recordRow
	// Unverified says the keys checked the capsule but not the parked
	// message's provenance (a plain message's rides on unsigned headers).
	Unverified bool
}

// crashDecision is the newest governance decision about the conversation.
type crashDecision struct {
	At, Time, Outcome, Action, Agent, Reason string
}

// crashContext reads conv's crash context for its page; a failed read is
// shown in the section, never as a failed page.
func (c *console) crashContext(ctx context.Context, conv wire.ID, bodies *bodyBudget) crashSection {
	opts := crashcontext.Options{
		Journal:       conversation.Options{Policy: conversation.LastN(crashJournalRecords)},
		MaxAuditBytes: auditPageBytes,
		Keys:          c.cfg.keys,
	}
	cc, err := crashcontext.Read(ctx, c.t, conv, opts)
	switch {
	case errors.Is(err, crashcontext.ErrUnknownConversation):
		return crashSection{Verified: c.cfg.keys != nil}
	case err != nil:
		return crashSection{Error: c.cfg.redact(err.Error())}
	}
	s := crashSection{Found: true, Verified: cc.Verified, Refused: cc.Refused, DecisionsCut: cc.DecisionsCut}
	for _, m := range cc.Journal {
		rec := runtime.Incoming{Position: m.Position, Timestamp: m.Timestamp, Headers: m.Headers, Payload: m.Payload}
		v, body := rowHead(m.Topic, &rec)
		bodies.show(&v, body)
		s.Journal = append(s.Journal, v)
	}
	if dl := cc.DeadLetter; dl != nil {
		d := dl.Capsule
		cp := &crashCapsule{Topic: runtime.TopicDLQ, Capsule: dl.At.String(), Reason: d.Reason.String(), Attempts: d.Attempts, Unverified: cc.Verified && !dl.Signed}
		if d.Detail != nil {
			cp.Detail = truncate(*d.Detail, shownBody)
		}
		parked := parkedRecord(d)
		if parked.Headers.Size() == 0 {
			// A plain message: its provenance rides on the capsule.
			if h, err := dl.Provenance.Headers(); err == nil {
				parked.Headers, _ = h.Encode()
			}
		}
		v, body := rowHead("parked", &parked)
		bodies.show(&v, body)
		cp.Parked = v
		s.DeadLetter = cp
	}
	if e := cc.LastDecision; e != nil {
		ev := e.Evidence
		s.Decision = &crashDecision{
			At: runtime.TopicAudit + " " + e.At.String(), Time: ev.At.UTC().Format("2006-01-02 15:04:05.000"), Outcome: string(ev.Outcome),
			Action: strings.TrimSpace(ev.Action.Kind + " " + ev.Action.Topic + " " + ev.Action.Operation),
			Agent:  ev.Action.Agent, Reason: truncate(ev.Reason, shownBody),
		}
	}
	return s
}

// parkedRecord is the message a capsule parked, as a record a page shows:
// its payload, with the headers of its envelope when it is one.
func parkedRecord(d *wire.DeadLetter) runtime.Incoming {
	rec := runtime.Incoming{Position: runtime.Position{Partition: d.Source.PartitionID, Offset: d.Source.Offset}, Payload: d.Payload}
	if env, err := wire.DecodeEnvelope(d.Payload); err == nil {
		h := wire.EnvelopeHeaders(env, wire.ContentRaw)
		h.Del(wire.HeaderContentType)
		rec.Headers, _ = h.Encode() // headers that do not encode are left out
	}
	return rec
}
