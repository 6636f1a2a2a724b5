// Package govern decides before every effect an agent performs and keeps a
// record of it that can be checked afterwards.
//
// A Governor is the policy: it sees each effect as an Action (what kind of
// effect, on which topic, from which agent to which, how large, whether the
// record is signed, what the sender claims about purpose and data
// classification) and returns a Decision: allow, block, modify, step up to a
// human approval, require a committed proposal, or defer. NewGate turns a
// Governor into the runtime's EffectGate, set on a client
// (runtime.ClientConfig.EffectGate) or on one agent (runtime.AgentConfig.EffectGate).
//
// The gate applies the decision under its Mode. Enforce applies it: a block
// returns an error matching ErrBlocked and publishes nothing, a modify
// publishes the replacement, a step-up waits for a human through package
// humaninput, a proposal waits for its votes to commit, a defer returns a
// retryable error matching ErrDeferred. Observe records what enforce would
// have done and lets the effect through unchanged. A failing governor fails
// closed in either mode.
//
// Every decision other than allow (and allows too, with
// Config.RecordAllows) appends a record to agent.audit as an AGDX event with
// operation OperationDecision, in the reference SDK's PolicyEvidence layout
// (Config.LaserGoLayout: laser-go's Evidence layout). Each gate's records
// form a hash chain (each carries its predecessor's digest and a sequence
// number) and are signed when the gate has a key, so Verify finds a
// removed, reordered or altered record; Activity folds the records into a
// supervisor's per-agent view.
//
// Proposals (Proposal, Vote, Tally) are the durable form of "not without
// n approvals", in the reference SDK's Intent and Vote layout: a pure fold
// decides whether the eligible voters committed, rejected, or let the
// proposal expire, and reaches the reference's decision on the same votes.
package govern
