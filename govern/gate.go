package govern

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/internal/effectgate"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// Config configures a Gate; the zero value enforces, records non-allow
// decisions on agent.audit unsigned, and uses the client's clock.
type Config struct {
	// Mode is Enforce (default) or Observe.
	Mode Mode
	// RecordAllows records allow decisions too.
	RecordAllows bool
	// Agent is the source of the gate's records and of its approval
	// requests when the action names no agent. Default "governor".
	Agent string
	// Producer names the gate's evidence chain. Default "gate-" and an id
	// minted from the client's id source on the first decision.
	Producer string
	// Key, when set, signs every evidence record.
	Key *sign.Key
	// LaserGoLayout writes each decision in laser-go's own Evidence layout
	// (producer, seq, prev, SHA-256 hash), which the reference's decoder
	// refuses. Default false: the reference SDK's PolicyEvidence layout
	// (BLAKE3 receipt digest chained by previous_digest), which reference
	// agents read, carrying laser-go's chain (producer, seq) and what that
	// layout has no field for (the proposal id, the body size, the signed
	// flag and the action's claims) as extra fields, which the reference's
	// decoder skips and the digest covers; Verify checks both layouts alike.
	LaserGoLayout bool
	// Clock stamps evidence and times proposals. Default the client's.
	Clock clock.Clock
	// AuditTopic receives the evidence. Default agent.audit.
	AuditTopic string
	// ApprovalTopic is where step-ups ask. Default agent.human_input.
	ApprovalTopic string
	// ApprovalTimeout bounds a step-up's wait. Default
	// runtime.DefaultRequestTimeout.
	ApprovalTimeout time.Duration
	// ProposalTopic carries proposals and votes. Default TopicProposals.
	ProposalTopic string
	// VoterKeys, when set, counts a vote only if its signature verifies to
	// the voter's principal; without it a vote counts when its envelope's
	// source is the voter, which the topic's write ACLs alone vouch for,
	// and a plain (typed) record's vote counts unchecked. Since two
	// different votes from one voter reject a proposal, without VoterKeys
	// anyone who can write the proposal topic can veto any proposal (and
	// vote in any name): set it unless every writer of that topic is
	// trusted.
	VoterKeys *sign.Registry
	// PollInterval is how often a pending proposal's votes are read.
	// Default 20 ms.
	PollInterval time.Duration
	// Logger receives what observe mode cannot return. Default the client's.
	Logger *slog.Logger
}

// Gate applies a Governor's decisions to the runtime's effects and records
// them (see the package doc); it is a runtime.EffectGate.
type Gate struct {
	gov  Governor
	opts Config

	// mu serializes the chain: a record is sealed against the previous
	// one and the chain advances only once it is on the log.
	mu   sync.Mutex
	seq  uint64
	prev string
	// admitted holds the recorded decisions that let an effect run, until
	// the runtime says how it ended (Effected).
	admitted map[*Action]admission
}

// admission is a recorded decision awaiting its effect's end.
type admission struct {
	d        Decision
	proposal string
}

// NewGate returns the gate applying gov under opts.
func NewGate(gov Governor, opts Config) *Gate {
	if opts.Mode == "" {
		opts.Mode = Enforce
	}
	if opts.Agent == "" {
		opts.Agent = "governor"
	}
	if opts.AuditTopic == "" {
		opts.AuditTopic = runtime.TopicAudit
	}
	if opts.ApprovalTopic == "" {
		opts.ApprovalTopic = runtime.TopicHumanInput
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = runtime.DefaultRequestTimeout
	}
	if opts.ProposalTopic == "" {
		opts.ProposalTopic = TopicProposals
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 20 * time.Millisecond
	}
	return &Gate{gov: gov, opts: opts, admitted: map[*Action]admission{}}
}

// Effected records a failed outcome after a recorded admission of a whose
// effect then did not reach the log (runtime.EffectListener). The runtime
// calls it for every effect it admitted; a caller of Admit outside the
// runtime calls it too, or the gate keeps the admission.
func (g *Gate) Effected(ctx context.Context, c *runtime.Client, a *Action, err error) {
	g.mu.Lock()
	adm, ok := g.admitted[a]
	delete(g.admitted, a)
	g.mu.Unlock()
	if !ok || err == nil {
		return
	}
	d := adm.d
	d.Reason = fmt.Sprintf("%s (the effect failed: %v)", d.Reason, err)
	if rerr := g.record(ctx, c, a, d, OutcomeFailed, adm.proposal); rerr != nil {
		g.logger(c).Warn("governance evidence of a failed effect not recorded", "error", rerr, "effect_error", err)
	}
}

var _ runtime.EffectListener = (*Gate)(nil)

// Mode returns the gate's mode.
func (g *Gate) Mode() Mode { return g.opts.Mode }

// Admit decides about a and applies the decision under the gate's mode.
func (g *Gate) Admit(ctx context.Context, c *runtime.Client, a *Action) error {
	d, govErr := g.gov.Decide(ctx, a)
	if govErr == nil && !known(d.Verdict) {
		govErr = fmt.Errorf("unknown verdict %q", d.Verdict)
	}
	if govErr != nil {
		// A broken policy fails closed in either mode: observing a policy
		// that cannot decide would let everything through unjudged.
		d = Decision{Verdict: VerdictError, Reason: govErr.Error()}
		g.deny(ctx, c, a, d, OutcomeBlocked)
		return runtime.Reject(&PolicyError{Kind: ErrBlocked, Verdict: d.Verdict, Reason: d.Reason, Err: govErr})
	}
	if g.opts.Mode == Observe {
		if d.Verdict != VerdictAllow || g.opts.RecordAllows {
			if err := g.record(ctx, c, a, d, OutcomeEffected, ""); err != nil {
				g.logger(c).Warn("governance evidence not recorded (observe mode)", "error", err)
			}
		}
		return nil
	}
	switch d.Verdict {
	case VerdictAllow:
		if g.opts.RecordAllows {
			return g.record(ctx, c, a, d, OutcomeEffected, "")
		}
		return nil
	case VerdictModify:
		if d.Body != nil {
			a.Body = d.Body
		}
		if d.Metadata != nil {
			a.Metadata = d.Metadata
		}
		return g.record(ctx, c, a, d, OutcomeModified, "")
	case VerdictDefer:
		g.deny(ctx, c, a, d, OutcomeDeferred)
		return runtime.Retry(&PolicyError{Kind: ErrDeferred, Verdict: d.Verdict, Reason: d.Reason, Policy: d.Policy})
	case VerdictStepUp:
		return g.approve(ctx, c, a, d, "", g.stepUp(ctx, c, a, d))
	case VerdictPropose:
		id, err := g.propose(ctx, c, a, d)
		return g.approve(ctx, c, a, d, id, err)
	}
	g.deny(ctx, c, a, d, OutcomeBlocked)
	return runtime.Reject(&PolicyError{Kind: ErrBlocked, Verdict: d.Verdict, Reason: d.Reason, Policy: d.Policy})
}

// approve finishes a step-up or proposal: approved runs the effect once
// recorded, refused stops it.
func (g *Gate) approve(ctx context.Context, c *runtime.Client, a *Action, d Decision, proposal string, refusal error) error {
	if refusal == nil {
		return g.record(ctx, c, a, d, OutcomeApproved, proposal)
	}
	if err := g.record(ctx, c, a, d, OutcomeRefused, proposal); err != nil {
		g.logger(c).Warn("governance evidence not recorded (the refusal stands)", "error", err)
	}
	return runtime.Reject(&PolicyError{Kind: ErrRefused, Verdict: d.Verdict, Reason: d.Reason, Policy: d.Policy, Err: refusal})
}

// deny records a denial; the denial stands whether or not its record lands.
func (g *Gate) deny(ctx context.Context, c *runtime.Client, a *Action, d Decision, outcome Outcome) {
	if err := g.record(ctx, c, a, d, outcome, ""); err != nil {
		g.logger(c).Warn("governance evidence not recorded (the denial stands)", "error", err)
	}
}

// stepUp asks a human to grant d's scope for a and waits for the answer:
// nil when granted.
func (g *Gate) stepUp(ctx context.Context, c *runtime.Client, a *Action, d Decision) error {
	prompt, err := json.Marshal(struct {
		Scope  string  `json:"scope"`
		Reason string  `json:"reason,omitempty"`
		Action Summary `json:"action"`
	}{d.Scope, d.Reason, summarize(a)})
	if err != nil {
		return err
	}
	_, err = humaninput.Ask(effectgate.Without(ctx), c, humaninput.Request{
		Topic: g.opts.ApprovalTopic, From: g.asker(a), Prompt: prompt, Conversation: a.Conversation,
		Approver: d.Approver, Timeout: g.opts.ApprovalTimeout,
	})
	return err
}

// asker is who asks for an approval of a.
func (g *Gate) asker(a *Action) string {
	if a.Agent != "" {
		return a.Agent
	}
	return g.opts.Agent
}

// record appends the evidence of d about a with outcome to the gate's chain.
func (g *Gate) record(ctx context.Context, c *runtime.Client, a *Action, d Decision, outcome Outcome, proposal string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opts.Producer == "" {
		g.opts.Producer = "gate-" + c.IDs().NewID().String()
	}
	ev := &Evidence{
		Producer: g.opts.Producer, Seq: g.seq + 1, Prev: g.prev, Action: summarize(a),
		Verdict: d.Verdict, Mode: g.opts.Mode, Outcome: outcome, PolicyID: d.Policy.ID, PolicyVersion: d.Policy.Version,
		Reason: d.Reason, Scope: d.Scope, Proposal: proposal, At: g.now(c),
	}
	rec := record{
		topic: g.opts.AuditTopic, key: g.opts.Producer, source: g.opts.Agent, operation: OperationDecision,
		conversation: a.Conversation, body: ev, sign: g.opts.Key,
	}
	if g.opts.LaserGoLayout {
		if err := ev.seal(); err != nil {
			return err
		}
	} else {
		pe, err := referenceEvidence(ev, c.IDs().NewID().String())
		if err != nil {
			return err
		}
		if rec.encoded, err = pe.Marshal(); err != nil {
			return fmt.Errorf("govern: encode evidence: %w", err)
		}
		ev.Hash = pe.ReceiptDigest
	}
	if err := appendRecord(ctx, c, rec); err != nil {
		return err
	}
	g.seq, g.prev = ev.Seq, ev.Hash
	switch outcome {
	case OutcomeEffected, OutcomeModified, OutcomeApproved:
		g.admitted[a] = admission{d: d, proposal: proposal}
	}
	return nil
}

// now is the gate's time, at the precision evidence keeps.
func (g *Gate) now(c *runtime.Client) time.Time {
	clock := g.opts.Clock
	if clock == nil {
		clock = c.Clock()
	}
	return clock.Now().UTC().Truncate(time.Microsecond)
}

func (g *Gate) logger(c *runtime.Client) *slog.Logger {
	if g.opts.Logger != nil {
		return g.opts.Logger
	}
	return c.Logger()
}

// known reports whether a governor may return v.
func known(v Verdict) bool {
	switch v {
	case VerdictAllow, VerdictBlock, VerdictModify, VerdictStepUp, VerdictPropose, VerdictDefer:
		return true
	}
	return false
}

var (
	_ runtime.EffectGate = (*Gate)(nil)
	_ interface {
		Effected(context.Context, *runtime.Client, *Action, error)
	} = (*Gate)(nil)
)
