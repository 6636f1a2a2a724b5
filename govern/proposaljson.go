package govern

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"
)

// The JSON layout of the reference's Intent and Vote (its serde form, what
// its Python SDK's __laser_json__ writes and __laser_from_json__ reads):
// times are Unix microseconds, the body a list of byte values, the policy
// "all", "any" or {"at_least": n}.
type intentJSON struct {
	IntentID      string     `json:"intent_id"`
	Conversation  string     `json:"conversation"`
	Proposer      string     `json:"proposer"`
	Body          byteList   `json:"body"`
	Digest        string     `json:"digest"`
	Eligible      []string   `json:"eligible_voters"`
	Mandatory     []string   `json:"mandatory_voters"`
	Policy        policyJSON `json:"policy"`
	PolicyVersion uint64     `json:"policy_version"`
	Deadline      uint64     `json:"deadline_micros"`
	At            uint64     `json:"at_micros"`
}

type voteJSON struct {
	IntentID      string `json:"intent_id"`
	Digest        string `json:"intent_digest"`
	PolicyVersion uint64 `json:"policy_version"`
	Voter         string `json:"voter"`
	Choice        Choice `json:"choice"`
	At            uint64 `json:"at_micros"`
}

// MarshalJSON writes p in the reference's Intent layout.
func (p Proposal) MarshalJSON() ([]byte, error) {
	rule, n := p.Rule, p.N
	if rule == Majority {
		rule, n = NOfM, len(p.Voters)/2+1
	}
	return json.Marshal(intentJSON{
		IntentID: p.ID, Conversation: p.Conversation, Proposer: p.Proposer, Body: p.Body, Digest: p.Digest,
		Eligible: nonNil(p.Voters), Mandatory: nonNil(p.Mandatory), Policy: policyJSON{rule, n},
		PolicyVersion: p.PolicyVersion, Deadline: micros(p.Deadline), At: micros(p.At),
	})
}

// UnmarshalJSON reads the reference's Intent layout.
func (p *Proposal) UnmarshalJSON(b []byte) error {
	var w intentJSON
	if err := readFields(b,
		field{"intent_id", &w.IntentID}, field{"conversation", &w.Conversation}, field{"proposer", &w.Proposer},
		field{"body", &w.Body}, field{"digest", &w.Digest}, field{"eligible_voters", &w.Eligible},
		field{"mandatory_voters", &w.Mandatory}, field{"policy", &w.Policy}, field{"policy_version", &w.PolicyVersion},
		field{"deadline_micros", &w.Deadline}, field{"at_micros", &w.At},
	); err != nil {
		return fmt.Errorf("govern: proposal: %w", err)
	}
	*p = Proposal{
		ID: w.IntentID, Conversation: w.Conversation, Proposer: w.Proposer, Body: w.Body, Digest: w.Digest,
		Voters: w.Eligible, Mandatory: w.Mandatory, Rule: w.Policy.rule, N: w.Policy.n,
		PolicyVersion: w.PolicyVersion, Deadline: fromMicros(w.Deadline), At: fromMicros(w.At),
	}
	return nil
}

// MarshalJSON writes v in the reference's Vote layout.
func (v Vote) MarshalJSON() ([]byte, error) {
	return json.Marshal(voteJSON{IntentID: v.Proposal, Digest: v.Digest, PolicyVersion: v.PolicyVersion, Voter: v.Voter, Choice: v.Choice, At: micros(v.At)})
}

// UnmarshalJSON reads the reference's Vote layout.
func (v *Vote) UnmarshalJSON(b []byte) error {
	var w voteJSON
	if err := readFields(b,
		field{"intent_id", &w.IntentID}, field{"intent_digest", &w.Digest}, field{"policy_version", &w.PolicyVersion},
		field{"voter", &w.Voter}, field{"choice", &w.Choice}, field{"at_micros", &w.At},
	); err != nil {
		return fmt.Errorf("govern: vote: %w", err)
	}
	if !w.Choice.valid() {
		return fmt.Errorf("govern: vote: choice %q is not allow, block or abstain", w.Choice)
	}
	*v = Vote{Proposal: w.IntentID, Digest: w.Digest, PolicyVersion: w.PolicyVersion, Voter: w.Voter, Choice: w.Choice, At: fromMicros(w.At)}
	return nil
}

// DecodeProposal reads a proposal in the reference's Intent layout and
// refuses one that is invalid (its digest not matching its body, among
// others), as the reference's decoder does.
func DecodeProposal(b []byte) (Proposal, error) {
	var p Proposal
	if err := json.Unmarshal(b, &p); err != nil {
		return Proposal{}, err
	}
	if err := p.Validate(); err != nil {
		return Proposal{}, err
	}
	return p, nil
}

// DecodeVote reads a vote in the reference's Vote layout.
func DecodeVote(b []byte) (Vote, error) {
	var v Vote
	err := json.Unmarshal(b, &v)
	return v, err
}

// field is one member of a record and where its value goes.
type field struct {
	name string
	dst  any
}

// readFields reads the JSON object b as the reference's serde reader does,
// so both SDKs accept the same records (and an intent is never mistaken for
// a vote): keys match exactly, none appears twice, every field is present
// and none holds null, nothing follows the object; unknown keys are
// skipped. encoding/json alone would match keys in any case, let the last
// of two win, and read null or a missing field as zero.
func readFields(b []byte, fields ...field) error {
	members, err := readObject(b)
	if err != nil {
		return err
	}
	for _, f := range fields {
		raw, ok := members[f.name]
		if !ok {
			return fmt.Errorf("no %q field", f.name)
		}
		if holdsNull(raw) {
			return fmt.Errorf("field %q holds null", f.name)
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return fmt.Errorf("field %q: %w", f.name, err)
		}
	}
	return nil
}

// readObject splits the JSON object b into its members by exact key,
// refusing a key that appears twice and anything after the object.
func readObject(b []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string) // a key is always a string in valid JSON
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
		if _, dup := members[key]; dup {
			return nil, fmt.Errorf("duplicate field %q", key)
		}
		members[key] = raw
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON object")
	}
	return members, nil
}

// holdsNull reports whether the JSON value raw is or contains null: no
// field of an intent or a vote is optional, at any depth.
func holdsNull(raw json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if tok == nil {
			return true
		}
	}
}

// policyJSON is the reference's IntentPolicy: "all", "any" or {"at_least": n}.
type policyJSON struct {
	rule Rule
	n    int
}

func (p policyJSON) MarshalJSON() ([]byte, error) {
	switch p.rule {
	case Unanimous:
		return []byte(`"all"`), nil
	case Any:
		return []byte(`"any"`), nil
	case NOfM:
		return json.Marshal(map[string]int{"at_least": p.n})
	}
	return nil, fmt.Errorf("govern: rule %q has no wire form", p.rule)
}

func (p *policyJSON) UnmarshalJSON(b []byte) error {
	var word string
	if json.Unmarshal(b, &word) == nil {
		switch word {
		case "all":
			*p = policyJSON{rule: Unanimous}
			return nil
		case "any":
			*p = policyJSON{rule: Any}
			return nil
		}
		return fmt.Errorf("unknown policy %q", word)
	}
	// The externally tagged form holds exactly its one variant.
	members, err := readObject(b)
	var n int
	if err != nil || len(members) != 1 || readFields(b, field{"at_least", &n}) != nil {
		return fmt.Errorf("policy %s is not \"all\", \"any\" or {\"at_least\": n}", b)
	}
	*p = policyJSON{rule: NOfM, n: n}
	return nil
}

// byteList is bytes written as a JSON list of integers, as serde writes a
// Vec<u8>.
type byteList []byte

func (b byteList) MarshalJSON() ([]byte, error) {
	var out bytes.Buffer
	out.WriteByte('[')
	for i, c := range b {
		if i > 0 {
			out.WriteByte(',')
		}
		fmt.Fprint(&out, c)
	}
	out.WriteByte(']')
	return out.Bytes(), nil
}

func (b *byteList) UnmarshalJSON(data []byte) error {
	// Wider than a byte, so a base64 string is refused and 256 is caught.
	var ints []uint16
	if err := json.Unmarshal(data, &ints); err != nil {
		return fmt.Errorf("body is not a list of byte values: %w", err)
	}
	out := make([]byte, len(ints))
	for i, c := range ints {
		if c > 255 {
			return fmt.Errorf("body value %d is not a byte", c)
		}
		out[i] = byte(c)
	}
	*b = out
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// micros is t in the reference's unsigned Unix microseconds: 0 before the
// epoch, the largest value past what it holds.
func micros(t time.Time) uint64 {
	if t.IsZero() || t.Before(time.Unix(0, 0)) {
		return 0
	}
	sec, us := uint64(t.Unix()), uint64(t.Nanosecond()/1000)
	if sec > math.MaxUint64/1_000_000 || sec*1_000_000 > math.MaxUint64-us {
		return math.MaxUint64
	}
	return sec*1_000_000 + us
}

// fromMicros is the time us unsigned Unix microseconds name, exactly for
// every value: time.UnixMicro takes a signed count, and a value past
// MaxInt64 would wrap to before the epoch, reordering the times the
// reference compares unsigned.
func fromMicros(us uint64) time.Time {
	return time.Unix(int64(us/1_000_000), int64(us%1_000_000)*1000).UTC()
}
