package conversation

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Window is the most records read from one partition: the newest Window
// records before its tail, the reference's drain ceiling.
const Window = 10_000

// maxPartitions caps a topic's partition count before it sizes a read, as
// the reference clamps a server-reported count.
const maxPartitions = 1024

// readers bounds how many partitions are read at once.
const readers = 8

// DefaultTopics are the topics read when Options.Topics is empty.
var DefaultTopics = []string{runtime.TopicCommands, runtime.TopicResponses}

// DefaultPolicy is the policy applied when Options.Policy is nil.
var DefaultPolicy Policy = LastN(50)

// History is a conversation's records in order, oldest first.
type History []*runtime.Message

// Bodies returns each record's body (the envelope body for AGDX records).
func (h History) Bodies() [][]byte {
	out := make([][]byte, len(h))
	for i, m := range h {
		out[i] = m.Body()
	}
	return out
}

// Options configures reading a conversation back; the zero value reads
// agent.commands and agent.responses under LastN(50).
type Options struct {
	// Topics are read in this order; a topic's index breaks timestamp ties.
	// Default DefaultTopics.
	Topics []string
	// Policy narrows the ordered history. Default DefaultPolicy, LastN(50).
	Policy Policy
	// AcrossSubconversations also keeps records whose root or parent
	// conversation is the one assembled (plain messages carry both; AGDX
	// envelopes carry neither, so only their own conversation matches).
	AcrossSubconversations bool
	// FromOffsets starts partition p at FromOffsets[p] instead of 0. As in
	// the reference the map is keyed by partition only and shared by every
	// topic, so it is exact for a single topic.
	FromOffsets map[uint32]uint64
	// UnderstoodFeatures are the must-understand bits the reader implements;
	// an envelope requiring others is skipped like an undecodable record.
	UnderstoodFeatures uint64
	// Verifier, when set, keeps only records whose signature verifies as
	// the consumer's gate checks it (runtime.Message.Verify: signed over
	// their headers, by their source's principal, for the topic they are
	// on, fresh), once per record id: a forged or replayed turn the
	// consumer dead-lettered never reaches a model. AssembleFor defaults it
	// to the handler's verifier.
	Verifier runtime.Verifier
	// MaxBytes is the most payload and header bytes held while reading.
	// LastN, TokenBudget and ByAgent (alone or leading a Chain) are applied
	// per partition as it is read, so they hold only what they may select;
	// another policy holds every matching record, and past the budget the
	// assembly fails with ErrOverBudget instead of growing without bound.
	// Default DefaultMaxBytes; negative means no budget.
	MaxBytes int

	// exactFrom makes a FromOffsets start older than the read window an
	// error (ErrBeyondWindow) instead of a start at the window: a fold's
	// FromOffsets bound must not skip records silently.
	exactFrom bool
}

func (o *Options) topics() []string {
	if len(o.Topics) == 0 {
		return DefaultTopics
	}
	return o.Topics
}

// Assemble reads conversation conv back from the log and applies the
// policy: see the package documentation for the rules.
func Assemble(ctx context.Context, t runtime.Transport, conv wire.ID, opts Options) (History, error) {
	p := opts.Policy
	if p == nil {
		p = DefaultPolicy
	}
	h, _, err := read(ctx, t, conv, &opts, p)
	if err != nil {
		return nil, err
	}
	return p.Select(h), nil
}

// AssembleFor assembles the conversation of the message a handler is
// handling, over the handler's client; without a Verifier in opts it
// verifies as the handler's consumer does (runtime.Ctx.Verifier).
func AssembleFor(c *runtime.Ctx, opts Options) (History, error) {
	if opts.Verifier == nil {
		opts.Verifier = c.Verifier()
	}
	return Assemble(c, c.Client().Transport(), c.Message().Provenance.Conversation, opts)
}

// entry is a matching record with its sort key.
type entry struct {
	topic int
	m     *runtime.Message
}

// source is one partition of one topic to read.
type source struct {
	topic     int
	name      string
	partition uint32
}

// read returns the conversation's records in order, narrowed per partition
// by what of policy applies while reading (see keeper), and, per partition,
// the last offset read (the snapshot position of a fold over this read).
func read(ctx context.Context, t runtime.Transport, conv wire.ID, opts *Options, policy Policy) (History, map[uint32]uint64, error) {
	budget := &byteBudget{limit: int64(opts.MaxBytes)}
	if opts.MaxBytes == 0 {
		budget.limit = DefaultMaxBytes
	}
	var sources []source
	for i, name := range opts.topics() {
		n, err := t.Partitions(ctx, name)
		if err != nil {
			return nil, nil, fmt.Errorf("conversation: partitions of %s: %w", name, err)
		}
		for p := range min(n, maxPartitions) {
			sources = append(sources, source{topic: i, name: name, partition: p})
		}
	}
	var (
		mu      sync.Mutex
		entries []entry
		asOf    = make(map[uint32]uint64)
		errs    = make([]error, len(sources))
		wg      sync.WaitGroup
		slots   = make(chan struct{}, readers)
	)
	for i, s := range sources {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			got, last, ok, err := readPartition(ctx, t, s, conv, opts, newKeeper(policy, budget))
			if err != nil {
				errs[i] = err
				return
			}
			mu.Lock()
			entries = append(entries, got...)
			if ok {
				asOf[s.partition] = max(asOf[s.partition], last)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	order(entries)
	h := make(History, 0, len(entries))
	seen := make(map[wire.ID]struct{})
	for i := range entries {
		// A copy replayed onto another partition is still one turn.
		if env := entries[i].m.Envelope; env != nil && env.Record != nil {
			if _, dup := seen[*env.Record]; dup {
				continue
			}
			seen[*env.Record] = struct{}{}
		}
		h = append(h, entries[i].m)
	}
	return h, asOf, nil
}

// order sorts by broker timestamp, ties broken by (topic index, partition,
// offset): deterministic, though records stamped in the same microsecond on
// different topics are not necessarily in publish order (each topic has its
// own offsets, so nothing better exists).
func order(entries []entry) {
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(
			cmp.Compare(a.m.Timestamp, b.m.Timestamp),
			cmp.Compare(a.topic, b.topic),
			cmp.Compare(a.m.Position.Partition, b.m.Position.Partition),
			cmp.Compare(a.m.Position.Offset, b.m.Position.Offset),
		)
	})
}

// readPartition reads one partition's window, from max(FromOffsets[p], tail
// - Window) to the tail as it was when the read began, and keeps the
// conversation's decodable (and, under a verifier, verified) records that
// keep lets through. last is the highest offset read and ok whether
// anything was.
func readPartition(ctx context.Context, t runtime.Transport, s source, conv wire.ID, opts *Options, keep *keeper) (got []entry, last uint64, ok bool, err error) {
	end, err := t.NextOffset(ctx, s.name, s.partition)
	if err != nil {
		return nil, 0, false, fmt.Errorf("conversation: tail of %s/%d: %w", s.name, s.partition, err)
	}
	oldest := end - min(end, Window)
	start, listed := opts.FromOffsets[s.partition]
	if opts.exactFrom && listed && start < oldest {
		return nil, 0, false, fmt.Errorf("%w: %s/%d from %d, but only offsets from %d are read", ErrBeyondWindow, s.name, s.partition, start, oldest)
	}
	from := max(start, oldest)
	var kept error
	_, err = logscan.Partition(ctx, t, s.name, s.partition, from, end, func(r *runtime.Incoming) {
		last, ok = r.Offset, true
		if kept != nil {
			return
		}
		m, err := runtime.DecodeRecord(s.name, r, opts.UnderstoodFeatures)
		if err != nil || !matches(&m.Provenance, conv, opts.AcrossSubconversations) {
			return
		}
		principal := ""
		if opts.Verifier != nil {
			v, err := m.Verify(opts.Verifier)
			if err != nil {
				return
			}
			principal = v.Principal
		}
		// A kept record must not pin the whole read batch it aliases.
		own := runtime.Incoming{Position: r.Position, Timestamp: r.Timestamp, Headers: r.Headers.Clone(), Payload: bytes.Clone(r.Payload)}
		if m, err = runtime.DecodeRecord(s.name, &own, opts.UnderstoodFeatures); err != nil {
			return
		}
		m.VerifiedPrincipal = principal
		kept = keep.offer(entry{topic: s.topic, m: m})
	})
	if err == nil {
		err = kept
	}
	if err != nil {
		return nil, last, ok, fmt.Errorf("conversation: %w", err)
	}
	return keep.kept(), last, ok, nil
}

// matches reports whether a record belongs to the conversation: its own, or
// with across set, one whose root or parent is the conversation.
func matches(p *wire.Provenance, conv wire.ID, across bool) bool {
	if p.Conversation == conv {
		return true
	}
	if !across {
		return false
	}
	return (p.RootConversation != nil && *p.RootConversation == conv) ||
		(p.ParentConversation != nil && *p.ParentConversation == conv)
}
