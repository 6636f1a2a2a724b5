package govern

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/wire"
)

// Action is one effect as a Governor sees it (see effect.Effect). Its
// Claims are advisory unless Signed.
type Action = effect.Effect

// Governor is a policy: it decides about every effect before it runs. An
// error fails the effect closed. Decide must not change the action; a
// Decision of Modify says what to replace.
type Governor interface {
	Decide(ctx context.Context, a *Action) (Decision, error)
}

// GovernorFunc adapts a function to a Governor.
type GovernorFunc func(ctx context.Context, a *Action) (Decision, error)

// Decide calls f.
func (f GovernorFunc) Decide(ctx context.Context, a *Action) (Decision, error) { return f(ctx, a) }

// Verdict is the kind of a decision; its string is the name evidence records.
type Verdict string

// Verdicts.
const (
	VerdictAllow   Verdict = "allow"
	VerdictBlock   Verdict = "block"
	VerdictModify  Verdict = "modify"
	VerdictStepUp  Verdict = "step_up"
	VerdictPropose Verdict = "propose"
	VerdictDefer   Verdict = "defer"
	VerdictError   Verdict = "error" // the governor failed; recorded, never returned by one
)

// Decision is what a Governor decided, with what the evidence records about
// why. Build one with Allow, Block, Modify, StepUp, Propose or Defer.
type Decision struct {
	Verdict Verdict
	Reason  string
	Policy  PolicyRef
	// Body and Metadata replace the effect's when the verdict is Modify
	// (nil keeps it).
	Body     []byte
	Metadata wire.Metadata
	// Scope is what a step-up approval grants; Approver, when set, is the
	// only principal whose answer counts under a verifier.
	Scope    string
	Approver string
	// Quorum is what a Propose decision needs before the effect runs.
	Quorum *Quorum
}

// PolicyRef names the policy that decided, as evidence records it.
type PolicyRef struct {
	ID      string
	Version string
}

// Allow lets the effect run.
func Allow() Decision { return Decision{Verdict: VerdictAllow} }

// Block stops the effect: nothing is published.
func Block(reason string) Decision { return Decision{Verdict: VerdictBlock, Reason: reason} }

// Modify runs the effect with body in place of its own.
func Modify(body []byte, reason string) Decision {
	return Decision{Verdict: VerdictModify, Body: body, Reason: reason}
}

// StepUp runs the effect only once a human grants scope (through package
// humaninput on agent.human_input).
func StepUp(scope, reason string) Decision {
	return Decision{Verdict: VerdictStepUp, Scope: scope, Reason: reason}
}

// Propose runs the effect only once a proposal for it commits under q.
func Propose(q Quorum, reason string) Decision {
	return Decision{Verdict: VerdictPropose, Quorum: &q, Reason: reason}
}

// Defer refuses the effect for now: inside a handler the error is retried.
func Defer(reason string) Decision { return Decision{Verdict: VerdictDefer, Reason: reason} }

// WithPolicy returns d naming the policy (id and version) that decided it.
func (d Decision) WithPolicy(id, version string) Decision {
	d.Policy = PolicyRef{ID: id, Version: version}
	return d
}

// Mode is how a gate applies decisions.
type Mode string

// Modes.
const (
	// Enforce applies each decision before the effect.
	Enforce Mode = "enforce"
	// Observe records what Enforce would have done and lets every effect
	// through unchanged: a policy's dry run.
	Observe Mode = "observe"
)

// Outcome is what a decision did to the effect, as evidence records it.
type Outcome string

// Outcomes.
const (
	OutcomeEffected Outcome = "effected" // the effect ran as asked
	OutcomeModified Outcome = "modified" // the effect ran with a replacement
	OutcomeBlocked  Outcome = "blocked"  // the effect did not run
	OutcomeDeferred Outcome = "deferred" // the effect did not run, retry later
	OutcomeApproved Outcome = "approved" // a human or a quorum approved; the effect ran
	OutcomeRefused  Outcome = "refused"  // the approval was refused or expired
	// OutcomeFailed follows an effected, modified or approved record of the
	// same action when the effect then failed to reach the log.
	OutcomeFailed Outcome = "failed"
)

// Sentinels the gate's errors match with errors.Is.
var (
	// ErrBlocked: the policy blocked the effect (or the governor failed).
	ErrBlocked = errors.New("govern: blocked by policy")
	// ErrDeferred: the policy deferred the effect; retry later.
	ErrDeferred = errors.New("govern: deferred by policy")
	// ErrRefused: the approval the policy asked for was refused or expired.
	ErrRefused = errors.New("govern: approval refused")
)

// PolicyError is the gate's refusal of an effect: which verdict, why, and
// under which policy. It matches ErrBlocked, ErrDeferred or ErrRefused.
type PolicyError struct {
	Kind    error
	Verdict Verdict
	Reason  string
	Policy  PolicyRef
	Err     error // the governor's or the approval's own error, if any
}

func (e *PolicyError) Error() string {
	msg := e.Kind.Error()
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Policy.ID != "" {
		msg += fmt.Sprintf(" (policy %s %s)", e.Policy.ID, e.Policy.Version)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Is matches the error's kind.
func (e *PolicyError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause.
func (e *PolicyError) Unwrap() error { return e.Err }

// Quorum is what a proposal needs: which rule, over which voters, for how
// long.
type Quorum struct {
	Rule Rule
	// N is the approvals NOfM needs.
	N int
	// Voters are the eligible principals; only their votes count.
	Voters []string
	// Mandatory voters (each also in Voters) must allow before the
	// proposal commits; one who blocks or abstains rejects it. Default none.
	Mandatory []string
	// PolicyVersion is frozen into the proposal; a vote for another version
	// does not count. Default: the deciding policy's Decision.Policy.Version
	// when it is an unsigned integer, else 0.
	PolicyVersion uint64
	// Within bounds the wait: past it the proposal expires. Default 1 h.
	Within time.Duration
}
