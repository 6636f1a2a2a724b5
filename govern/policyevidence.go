package govern

import (
	"fmt"
	"time"

	"github.com/fxamacker/cbor/v2"

	"github.com/lasergo/laser/internal/blake3"
)

// PolicyEvidence is one governance decision in the reference SDK's layout
// (its PolicyEvidence), as a reference agent's governed handle appends it
// to agent.audit. Its ReceiptDigest is the BLAKE3 (hex) of its encoding
// with ReceiptDigest empty, and PreviousDigest is the digest of the
// decision before it in the same conversation and process: a chain with no
// sequence number, which restarts (with no PreviousDigest) when the
// reference process does. The field order is the reference's and is part
// of the digest. The fields after AtMicros are laser-go's: its gates write
// them (a reference agent does not), the reference's decoder skips them
// (its serde layout does not deny unknown fields), and they are covered by
// the digest, so the chain's producer and seq cannot be changed unnoticed.
type PolicyEvidence struct {
	DecisionID     string      `cbor:"decision_id"`
	Decision       string      `cbor:"decision"`
	Mode           string      `cbor:"mode"`
	Kind           string      `cbor:"kind"`
	Stream         string      `cbor:"stream"`
	Topic          string      `cbor:"topic"`
	Source         string      `cbor:"source,omitempty"`
	Target         string      `cbor:"target,omitempty"`
	Conversation   string      `cbor:"conversation,omitempty"`
	Correlation    string      `cbor:"correlation,omitempty"`
	Operation      string      `cbor:"operation,omitempty"`
	Tool           string      `cbor:"tool,omitempty"`
	OnBehalfOf     string      `cbor:"on_behalf_of,omitempty"`
	Reason         string      `cbor:"reason,omitempty"`
	ApprovedScope  string      `cbor:"approved_scope,omitempty"`
	Policy         *PolicyPack `cbor:"policy,omitempty"`
	RiskScore      *float64    `cbor:"risk_score,omitempty"`
	ReceiptDigest  string      `cbor:"receipt_digest"`
	PreviousDigest string      `cbor:"previous_digest,omitempty"`
	Outcome        string      `cbor:"outcome"`
	AtMicros       uint64      `cbor:"at_micros"`

	// Producer and Seq place the decision in a laser-go gate's chain.
	Producer string `cbor:"producer,omitempty"`
	Seq      uint64 `cbor:"seq,omitempty"`
	// Proposal is the id of the proposal the decision waited for.
	Proposal string `cbor:"proposal,omitempty"`
	// What Summary records of the action beyond the reference's fields.
	BodySize           int    `cbor:"body_size,omitempty"`
	Signed             bool   `cbor:"signed,omitempty"`
	Purpose            string `cbor:"purpose,omitempty"`
	DataClassification string `cbor:"data_classification,omitempty"`
	EffectClass        string `cbor:"effect_class,omitempty"`
}

// PolicyPack is the policy pack and rules a reference decision names.
type PolicyPack struct {
	PackID      string   `cbor:"pack_id"`
	PackVersion string   `cbor:"pack_version"`
	RuleIDs     []string `cbor:"rule_ids"`
}

// referenceCBOR encodes fields in declaration order and floats at their
// shortest lossless width, as the reference's encoder does, so a decoded
// record re-encodes to the bytes its digest was taken over.
var referenceCBOR = func() cbor.EncMode {
	em, err := cbor.EncOptions{ShortestFloat: cbor.ShortestFloat16}.EncMode()
	if err != nil {
		panic(err) // static options
	}
	return em
}()

// Marshal encodes the record in the reference's layout.
func (e *PolicyEvidence) Marshal() ([]byte, error) { return referenceCBOR.Marshal(e) }

// DecodePolicyEvidence decodes a reference decision read off agent.audit;
// a field the layout does not define is an error, since its digest would
// not cover it.
func DecodePolicyEvidence(b []byte) (*PolicyEvidence, error) {
	var e PolicyEvidence
	if err := recordDec.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("govern: decode reference evidence: %w", err)
	}
	return &e, nil
}

// Digest is the digest the record's ReceiptDigest must equal: the BLAKE3
// (hex) of its encoding with ReceiptDigest empty.
func (e *PolicyEvidence) Digest() (string, error) {
	cp := *e
	cp.ReceiptDigest = ""
	b, err := cp.Marshal()
	if err != nil {
		return "", fmt.Errorf("govern: encode reference evidence: %w", err)
	}
	return blake3.SumHex(b), nil
}

// Chain names the chain a reference decision belongs to in Verify's
// findings: its source and conversation.
func (e *PolicyEvidence) Chain() string {
	return "reference:" + e.Source + "/" + e.Conversation
}

// referenceEvidence is ev in the reference's layout, sealed, with id as its
// decision id and ev.Prev as its predecessor's digest.
func referenceEvidence(ev *Evidence, id string) (*PolicyEvidence, error) {
	a := &ev.Action
	pe := &PolicyEvidence{
		DecisionID: id, Decision: string(ev.Verdict), Mode: string(ev.Mode), Kind: a.Kind, Topic: a.Topic,
		Source: a.Agent, Target: a.Target, Conversation: a.Conversation, Operation: a.Operation,
		Reason: ev.Reason, ApprovedScope: ev.Scope, PreviousDigest: ev.Prev, Outcome: string(ev.Outcome),
		AtMicros: uint64(ev.At.UnixMicro()),
		Producer: ev.Producer, Seq: ev.Seq, Proposal: ev.Proposal, BodySize: a.BodySize, Signed: a.Signed,
		Purpose: a.Purpose, DataClassification: a.DataClassification, EffectClass: a.EffectClass,
	}
	if ev.PolicyID != "" || ev.PolicyVersion != "" {
		// rule_ids is required by the reference's decoder: an empty list, never null.
		pe.Policy = &PolicyPack{PackID: ev.PolicyID, PackVersion: ev.PolicyVersion, RuleIDs: []string{}}
	}
	digest, err := pe.Digest()
	pe.ReceiptDigest = digest
	return pe, err
}

// chainOf returns the laser-go chain view of a decision a laser-go gate
// wrote in the reference's layout (its body names the producer and seq);
// ok is false for a reference agent's decision.
func chainOf(pe *PolicyEvidence) (ev *Evidence, ok bool) {
	if pe.Producer == "" || pe.Seq == 0 {
		return nil, false
	}
	ev = &Evidence{
		Producer: pe.Producer, Seq: pe.Seq, Prev: pe.PreviousDigest, Hash: pe.ReceiptDigest,
		Action: Summary{
			Kind: pe.Kind, Topic: pe.Topic, Operation: pe.Operation, Agent: pe.Source, Target: pe.Target, Conversation: pe.Conversation,
			BodySize: pe.BodySize, Signed: pe.Signed, Purpose: pe.Purpose, DataClassification: pe.DataClassification, EffectClass: pe.EffectClass,
		},
		Verdict: Verdict(pe.Decision), Mode: Mode(pe.Mode), Outcome: Outcome(pe.Outcome),
		Reason: pe.Reason, Scope: pe.ApprovedScope, Proposal: pe.Proposal, At: time.UnixMicro(int64(pe.AtMicros)).UTC(),
	}
	if pe.Policy != nil {
		ev.PolicyID, ev.PolicyVersion = pe.Policy.PackID, pe.Policy.PackVersion
	}
	return ev, true
}
