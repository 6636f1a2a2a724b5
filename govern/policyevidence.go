package govern

import (
	"fmt"

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
// of the digest.
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
