package govern

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/fxamacker/cbor/v2"
)

// OperationDecision is the operation of every evidence event on agent.audit,
// so a reader picks the decisions out without decoding bodies.
const OperationDecision = "policy_decision"

// Summary is what evidence and proposals record of an action: everything
// but its body, of which only the size.
type Summary struct {
	Kind               string `cbor:"kind"`
	Topic              string `cbor:"topic"`
	Operation          string `cbor:"operation,omitempty"`
	Agent              string `cbor:"agent,omitempty"`
	Target             string `cbor:"target,omitempty"`
	Conversation       string `cbor:"conversation,omitempty"`
	BodySize           int    `cbor:"body_size"`
	Signed             bool   `cbor:"signed"`
	Purpose            string `cbor:"purpose,omitempty"`
	DataClassification string `cbor:"data_classification,omitempty"`
	EffectClass        string `cbor:"effect_class,omitempty"`
}

// summarize returns the summary of a.
func summarize(a *Action) Summary {
	s := Summary{
		Kind: string(a.Kind), Topic: a.Topic, Operation: a.Operation, Agent: a.Agent, Target: a.Target,
		BodySize: len(a.Body), Signed: a.Signed,
		Purpose: a.Claims.Purpose, DataClassification: a.Claims.DataClassification, EffectClass: a.Claims.EffectClass,
	}
	if !a.Conversation.IsZero() {
		s.Conversation = a.Conversation.String()
	}
	return s
}

// Evidence is one governance decision as agent.audit keeps it. The records
// one gate appends form a chain: Seq counts them from 1 and Prev is the
// previous record's Hash, which is the SHA-256 of the record's encoding with
// Hash empty. So a record removed, moved or changed breaks the chain where
// it happened (see Verify).
type Evidence struct {
	// Producer names the chain: one gate instance.
	Producer      string    `cbor:"producer"`
	Seq           uint64    `cbor:"seq"`
	Prev          string    `cbor:"prev,omitempty"`
	Hash          string    `cbor:"hash"`
	Action        Summary   `cbor:"action"`
	Verdict       Verdict   `cbor:"verdict"`
	Mode          Mode      `cbor:"mode"`
	Outcome       Outcome   `cbor:"outcome"`
	PolicyID      string    `cbor:"policy_id,omitempty"`
	PolicyVersion string    `cbor:"policy_version,omitempty"`
	Reason        string    `cbor:"reason,omitempty"`
	Scope         string    `cbor:"scope,omitempty"`
	Proposal      string    `cbor:"proposal,omitempty"`
	At            time.Time `cbor:"at"`
}

// recordCBOR encodes records deterministically, times as RFC 3339 with
// nanoseconds, so a decoded record re-encodes to the same bytes.
var recordCBOR = func() cbor.EncMode {
	opts := cbor.CoreDetEncOptions()
	opts.Time = cbor.TimeRFC3339Nano
	em, err := opts.EncMode()
	if err != nil {
		panic(err) // static options
	}
	return em
}()

// Marshal encodes the record.
func (e *Evidence) Marshal() ([]byte, error) { return recordCBOR.Marshal(e) }

// recordDec refuses fields a record does not define: an unsigned record
// could otherwise carry content its hash does not cover.
var recordDec = func() cbor.DecMode {
	dm, err := cbor.DecOptions{ExtraReturnErrors: cbor.ExtraDecErrorUnknownField}.DecMode()
	if err != nil {
		panic(err) // static options
	}
	return dm
}()

// DecodeEvidence decodes a record read off agent.audit; a field it does not
// define is an error.
func DecodeEvidence(b []byte) (*Evidence, error) {
	var e Evidence
	if err := recordDec.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("govern: decode evidence: %w", err)
	}
	return &e, nil
}

// Digest is the hash the record's Hash must equal: the SHA-256 (hex) of its
// encoding with Hash empty.
func (e *Evidence) Digest() (string, error) {
	cp := *e
	cp.Hash = ""
	b, err := cp.Marshal()
	if err != nil {
		return "", fmt.Errorf("govern: encode evidence: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// seal sets the record's Hash.
func (e *Evidence) seal() error {
	h, err := e.Digest()
	e.Hash = h
	return err
}
