package govern_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/govern"
)

// withTimes is the reference's intent with its deadline and time replaced.
func withTimes(deadline, at string) string {
	return strings.Replace(referenceIntent, `"deadline_micros": 1796215953169956, "at_micros": 1796215853180980`,
		`"deadline_micros": `+deadline+`, "at_micros": `+at, 1)
}

func TestAnIntentWhoseDeadlineIsNotAfterAHugeTimeIsRefused(t *testing.T) {
	// 2^63+1: as a signed number it would wrap below the deadline.
	if p, err := govern.DecodeProposal([]byte(withTimes("1000", "9223372036854775809"))); err == nil {
		t.Fatalf("decoded %+v, want the deadline refused as not after the proposal time", p)
	}
}

func TestTheLargestDeadlineIsAcceptedAndKept(t *testing.T) {
	p, err := govern.DecodeProposal([]byte(withTimes("18446744073709551615", "1796215853180980")))
	if err != nil {
		t.Fatalf("decode an intent with deadline u64::MAX: %v, want it accepted as the reference does", err)
	}
	enc, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(enc), `"deadline_micros":18446744073709551615`) {
		t.Fatalf("re-encoded as %s, want the deadline kept", enc)
	}
}

func TestAVoteAfterNowDoesNotCountAtHugeTimes(t *testing.T) {
	// The intent is valid to the reference (its deadline is after its time),
	// and the vote, inside its window, is long after now.
	p, err := govern.DecodeProposal([]byte(withTimes("9223372036854776808", "9223372036854775809")))
	if err != nil {
		t.Fatal(err)
	}
	p.Rule, p.Mandatory = govern.Any, nil
	v, err := govern.DecodeVote([]byte(strings.Replace(strings.Replace(referenceVote, "1796215853181222", "9223372036854775813", 1), "abstain", "allow", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if res := govern.Tally(&p, []govern.Vote{v}, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)); res.State != govern.Pending {
		t.Fatalf("a vote at 2^63+5 micros tallies %s (%s) in 2026, want pending: it is after now", res.State, res.Reason)
	}
}

// The reference reads records with serde: exact-case keys, each once,
// every field present and none null; unknown keys are skipped.
func TestRecordsTheReferenceRefusesAreRefused(t *testing.T) {
	for _, c := range []struct{ name, record string }{
		{"upper-case key", strings.Replace(referenceVote, `"voter"`, `"VOTER"`, 1)},
		{"duplicate key", strings.Replace(referenceVote, `"voter": "a"`, `"voter": "a", "voter": "b"`, 1)},
		{"null policy version", strings.Replace(referenceVote, `"policy_version": 7`, `"policy_version": null`, 1)},
		{"null voter", strings.Replace(referenceVote, `"voter": "a"`, `"voter": null`, 1)},
		{"missing policy version", strings.Replace(referenceVote, `"policy_version": 7, `, ``, 1)},
		{"missing time", strings.Replace(referenceVote, `, "at_micros": 1796215853181222`, ``, 1)},
		{"trailing data", referenceVote + ` {}`},
	} {
		if v, err := govern.DecodeVote([]byte(c.record)); err == nil {
			t.Errorf("vote with %s: decoded %+v, want an error", c.name, v)
		}
	}
	for _, c := range []struct{ name, record string }{
		{"upper-case key", strings.Replace(referenceIntent, `"proposer"`, `"Proposer"`, 1)},
		{"duplicate key", strings.Replace(referenceIntent, `"proposer": "prop"`, `"proposer": "prop", "proposer": "other"`, 1)},
		{"null mandatory voters", strings.Replace(referenceIntent, `"mandatory_voters": ["a"]`, `"mandatory_voters": null`, 1)},
		{"null eligible voter", strings.Replace(referenceIntent, `["a", "b", "c"]`, `["a", "b", "c", null]`, 1)},
		{"null body byte", strings.Replace(referenceIntent, `[116, `, `[null, 116, `, 1)},
		{"missing policy version", strings.Replace(referenceIntent, `"policy_version": 7, `, ``, 1)},
		{"missing time", strings.Replace(referenceIntent, `, "at_micros": 1796215853180980`, ``, 1)},
		{"missing mandatory voters", strings.Replace(referenceIntent, `"mandatory_voters": ["a"], `, ``, 1)},
		{"duplicate policy key", strings.Replace(referenceIntent, `{"at_least": 2}`, `{"at_least": 2, "at_least": 3}`, 1)},
		{"upper-case policy", strings.Replace(referenceIntent, `{"at_least": 2}`, `{"AT_LEAST": 2}`, 1)},
	} {
		if p, err := govern.DecodeProposal([]byte(c.record)); err == nil {
			t.Errorf("intent with %s: decoded %+v, want an error", c.name, p)
		}
	}
}

func TestUnknownKeysAreSkippedAsTheReferenceDoes(t *testing.T) {
	v, err := govern.DecodeVote([]byte(strings.TrimSuffix(referenceVote, `}`) + `, "note": null, "Voter": "b"}`))
	if err != nil || v.Voter != "a" {
		t.Fatalf("decoded %+v (%v), want voter a, the unknown keys skipped", v, err)
	}
}
