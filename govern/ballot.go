package govern

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// DefaultProposalWindow is how long a proposal waits for votes when its
// Quorum says nothing.
const DefaultProposalWindow = time.Hour

// propose publishes a proposal for a under d's quorum and waits until its
// votes decide it: nil when committed. It returns the proposal's id.
func (g *Gate) propose(ctx context.Context, c *runtime.Client, a *Action, d Decision) (string, error) {
	q := d.Quorum
	if q == nil {
		return "", fmt.Errorf("govern: a propose decision needs a quorum")
	}
	within := q.Within
	if within <= 0 {
		within = DefaultProposalWindow
	}
	body, err := recordCBOR.Marshal(Effect{Action: summarize(a), Reason: d.Reason})
	if err != nil {
		return "", fmt.Errorf("govern: encode proposal: %w", err)
	}
	conv := a.Conversation
	if conv.IsZero() {
		conv = c.IDs().NewID()
	}
	version := q.PolicyVersion
	if version == 0 { // the deciding policy's version, when it is a number
		version, _ = strconv.ParseUint(d.Policy.Version, 10, 64)
	}
	now := g.now(c)
	p := &Proposal{
		ID: c.IDs().NewID().String(), Conversation: conv.String(), Proposer: g.asker(a), Body: body, Digest: BodyDigest(body),
		Voters: q.Voters, Mandatory: q.Mandatory, Rule: q.Rule, N: q.N, PolicyVersion: version, At: now, Deadline: now.Add(within),
	}
	if err := p.Validate(); err != nil {
		return "", err
	}
	if err := c.Transport().EnsureTopics(ctx, 1, g.opts.ProposalTopic); err != nil {
		return "", fmt.Errorf("govern: proposal topic: %w", err)
	}
	err = appendRecord(ctx, c, record{
		topic: g.opts.ProposalTopic, source: p.Proposer, operation: OperationProposal,
		conversation: conv, body: p, json: true, sign: g.opts.Key,
	})
	if err != nil {
		return "", err
	}
	clock := g.opts.Clock
	if clock == nil {
		clock = c.Clock()
	}
	// Each pass reads only what was appended since the last one.
	var votes []Vote
	var from map[uint32]uint64
	for {
		_, more, next, err := readProposals(ctx, c.Transport(), g.opts.ProposalTopic, from, g.opts.VoterKeys)
		if err != nil {
			return p.ID, err
		}
		for _, v := range more { // other proposals' votes are not kept while this one waits
			if v.Proposal == p.ID {
				votes = append(votes, v)
			}
		}
		from = next
		switch res := Tally(p, votes, clock.Now()); res.State {
		case Committed:
			return p.ID, nil
		case Rejected, Expired:
			return p.ID, fmt.Errorf("proposal %s %s: %s (%d of %d approvals)", p.ID, res.State, res.Reason, len(res.Approve), res.Required)
		}
		select {
		case <-clock.After(g.opts.PollInterval):
		case <-ctx.Done():
			return p.ID, ctx.Err()
		}
	}
}

// CastVote publishes v on topic (default TopicProposals) as an AGDX event
// from v.Voter with a JSON body in the reference's Vote layout, signed when
// key is set. Build v with NewVote, which binds it to the proposal's digest
// and policy version; a vote without a choice is refused.
func CastVote(ctx context.Context, c *runtime.Client, topic string, v Vote, key *sign.Key) error {
	if topic == "" {
		topic = TopicProposals
	}
	if !v.Choice.valid() {
		return fmt.Errorf("govern: vote on %s: choice %q is not allow, block or abstain", v.Proposal, v.Choice)
	}
	if v.At.IsZero() {
		v.At = c.Clock().Now()
	}
	v.At = v.At.UTC().Truncate(time.Microsecond)
	if err := c.Transport().EnsureTopics(ctx, 1, topic); err != nil {
		return fmt.Errorf("govern: proposal topic: %w", err)
	}
	return appendRecord(ctx, c, record{topic: topic, key: v.Proposal, source: v.Voter, operation: OperationVote, body: v, json: true, sign: key})
}

// ReadProposals reads every proposal and vote on topic (default
// TopicProposals), in log order per partition: laser-go's AGDX events and
// the reference's typed records (plain JSON, what its Python SDK's
// topic.publish(intent) writes). Records that do not decode, and proposals
// whose digest does not match their body, are skipped, and so is a vote
// not sent by its voter or, when keys is set, not signed by its voter's
// key (a plain record carries neither, so with keys its votes never count).
func ReadProposals(ctx context.Context, t runtime.Transport, topic string, keys *sign.Registry) ([]Proposal, []Vote, error) {
	if topic == "" {
		topic = TopicProposals
	}
	props, votes, _, err := readProposals(ctx, t, topic, nil, keys)
	return props, votes, err
}

// readProposals reads the proposals and votes on topic from the offsets in
// from, and returns the offsets to resume from. A vote counts only from its
// voter (see voteAuthentic).
func readProposals(ctx context.Context, t runtime.Transport, topic string, from map[uint32]uint64, keys *sign.Registry) ([]Proposal, []Vote, map[uint32]uint64, error) {
	var props []Proposal
	var votes []Vote
	next, err := logscan.Topic(ctx, t, topic, from, func(rec *runtime.Incoming) {
		m, err := runtime.DecodeRecord(topic, rec, 0)
		if err != nil || m.Envelope == nil { // a typed record: its fields say which it is
			if p, err := DecodeProposal(rec.Payload); err == nil {
				props = append(props, p)
			} else if v, err := DecodeVote(rec.Payload); err == nil && keys == nil {
				votes = append(votes, v)
			}
			return
		}
		env := m.Envelope
		if env.Kind != wire.KindEvent || env.Operation == nil {
			return
		}
		switch *env.Operation {
		case OperationProposal:
			if p, err := DecodeProposal(env.Body); err == nil {
				props = append(props, p)
			}
		case OperationVote:
			if v, err := DecodeVote(env.Body); err == nil && voteAuthentic(m, v, keys) {
				votes = append(votes, v)
			}
		}
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("govern: %w", err)
	}
	return props, votes, next, nil
}

// governanceEvent decodes rec as an AGDX event with an operation.
func governanceEvent(topic string, rec *runtime.Incoming) (*runtime.Message, bool) {
	m, err := runtime.DecodeRecord(topic, rec, 0)
	if err != nil || m.Envelope == nil || m.Envelope.Kind != wire.KindEvent || m.Envelope.Operation == nil {
		return nil, false
	}
	return m, true
}

// voteAuthentic reports whether v was cast by its voter: the envelope's
// source must be the voter and, when keys is set, its signature must verify
// to the voter's principal, bound to this topic and appended when it was
// signed (runtime.Message.Verify), so a vote copied from another topic does
// not count. Without keys a vote is only as trustworthy as the topic's
// write ACLs.
func voteAuthentic(m *runtime.Message, v Vote, keys *sign.Registry) bool {
	if string(m.Envelope.Source) != v.Voter {
		return false
	}
	if keys == nil {
		return true
	}
	verified, err := m.Verify(keys)
	return err == nil && verified.Principal == v.Voter
}
