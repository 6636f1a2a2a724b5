package interop

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Intents (govern.Proposal) and votes on agent.proposals, crossing both
// ways on one log: the reference reads and tallies laser-go's with its own
// Intent, Vote and decide, laser-go reads and tallies the reference's with
// DecodeProposal, DecodeVote and Tally, and both reach the same decision.

// pyDecision is the reference's decide over the intent on the proposal
// topic: its outcome ("" while undecided), reason and the votes it counted.
func (r *rig) pyDecision(t *testing.T, intentID string) (outcome, reason string, considered []string) {
	t.Helper()
	res := r.py.call(r.ctx, t, "intent_decide", map[string]any{"topic": govern.TopicProposals, "intent_id": intentID, "now_micros": time.Now().UnixMicro()})
	d, _ := res["decision"].(map[string]any)
	if d == nil {
		return "", "", nil
	}
	for _, pair := range d["votes_considered"].([]any) {
		p := pair.([]any)
		considered = append(considered, p[0].(string)+"="+p[1].(string))
	}
	if d["outcome"] == "committed" && d["authorizes"] != true {
		t.Fatalf("the reference's committed decision does not authorize its intent: %v", d)
	}
	return d["outcome"].(string), d["reason"].(string), considered
}

// goTally is laser-go's tally of the proposal id on the proposal topic.
func (r *rig) goTally(t *testing.T, id string) (govern.Proposal, govern.Result) {
	t.Helper()
	props, votes, err := govern.ReadProposals(r.ctx, r.client.Transport(), govern.TopicProposals, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(props, func(p govern.Proposal) bool { return p.ID == id })
	if i < 0 {
		t.Fatalf("laser-go read no proposal %s among %d", id, len(props))
	}
	return props[i], govern.Tally(&props[i], votes, time.Now())
}

func (r *rig) pyVote(t *testing.T, intentID, voter string, choice govern.Choice, tamper map[string]any) {
	t.Helper()
	r.py.call(r.ctx, t, "intent_vote", map[string]any{"topic": govern.TopicProposals, "intent_id": intentID, "voter": voter, "choice": string(choice), "tamper": tamper})
}

func (r *rig) goVote(t *testing.T, p *govern.Proposal, voter string, choice govern.Choice, change func(*govern.Vote)) {
	t.Helper()
	v, err := govern.NewVote(p, voter, choice)
	if err != nil {
		t.Fatal(err)
	}
	if change != nil {
		change(&v)
	}
	if err := govern.CastVote(r.ctx, r.client, govern.TopicProposals, v, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRecordsInteropIntentsAndVotesCrossBothWays(t *testing.T) {
	r := newRig(t)
	if err := r.client.Transport().EnsureTopics(r.ctx, 1, govern.TopicProposals); err != nil {
		t.Fatal(err)
	}

	t.Run("a Go intent gets Python votes", func(t *testing.T) {
		// A governed emit waits for three of four approvals, py-voter's
		// among them; go-voter (a Go agent) allows as soon as it reads it.
		q := govern.Quorum{Rule: govern.NOfM, N: 3, Voters: []string{"py-voter", "go-voter", "late-a", "late-b"},
			Mandatory: []string{"py-voter"}, PolicyVersion: 4, Within: time.Minute}
		gate := govern.NewGate(govern.GovernorFunc(func(context.Context, *govern.Action) (govern.Decision, error) {
			return govern.Propose(q, "above the limit"), nil
		}), govern.Config{Agent: "go-proposer", PollInterval: 20 * time.Millisecond})
		proposed := make(chan govern.Proposal, 1)
		r.start(t, runtime.AgentConfig{ID: "go-voter", Listen: govern.TopicProposals, Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
			env := hc.Message().Envelope
			if env == nil || env.Operation == nil || *env.Operation != govern.OperationProposal {
				return nil
			}
			p, err := govern.DecodeProposal(env.Body)
			if err != nil || !slices.Contains(p.Voters, "go-voter") {
				return nil
			}
			v, err := govern.NewVote(&p, "go-voter", govern.VoteAllow)
			if err != nil {
				return err
			}
			proposed <- p
			return govern.CastVote(hc, hc.Client(), "", v, nil)
		})})
		governed := runtime.NewClient(r.client.Transport(), runtime.ClientConfig{EffectGate: gate})
		emitted := make(chan error, 1)
		go func() {
			_, err := governed.Send(r.ctx, runtime.Out{Kind: wire.KindEvent, Topic: sessions, From: "go-proposer", Body: []byte("wire 25000 to acme")}, runtime.WithConversation(conversation.Derive(r.ep.stream+"/intent")))
			emitted <- err
		}()
		p := receive(r.ctx, t, proposed, "proposal")

		// The reference decodes the Go intent (its digest checked) as laser-go wrote it.
		read := r.py.call(r.ctx, t, "intent_read", map[string]any{"topic": govern.TopicProposals})
		var intent map[string]any
		for _, i := range read["intents"].([]any) {
			if m := i.(map[string]any); m["intent_id"] == p.ID {
				intent = m
			}
		}
		if intent == nil {
			t.Fatalf("the reference did not decode the Go intent %s: %v", p.ID, read)
		}
		if intent["digest"] != p.Digest || intent["policy_version"] != float64(4) || !slices.Equal(strs(intent["mandatory_voters"]), []string{"py-voter"}) ||
			intent["conversation"] != p.Conversation || intent["proposer"] != "go-proposer" {
			t.Fatalf("the reference read the Go intent as %v, want digest %s, policy version 4, mandatory py-voter", intent, p.Digest)
		}
		if pol, _ := intent["policy"].(map[string]any); pol["at_least"] != float64(3) {
			t.Fatalf("the reference read the policy as %v, want at_least 3", intent["policy"])
		}

		// py-voter allows; late-a and late-b allow with the wrong digest and
		// the wrong policy version: counted, they would commit it now.
		r.pyVote(t, p.ID, "py-voter", govern.VoteAllow, nil)
		r.pyVote(t, p.ID, "late-a", govern.VoteAllow, map[string]any{"intent_digest": strings.Repeat("0", 64)})
		r.pyVote(t, p.ID, "late-b", govern.VoteAllow, map[string]any{"policy_version": 5})
		if _, res := r.goTally(t, p.ID); res.State != govern.Pending || len(res.Approve) > 2 {
			t.Fatalf("laser-go tallied %+v after votes for another digest and policy version, want pending with at most 2 approvals", res)
		}
		if outcome, _, _ := r.pyDecision(t, p.ID); outcome != "" {
			t.Fatalf("the reference decided %q after votes for another digest and policy version, want undecided", outcome)
		}

		// late-a abstains (from Python), late-b allows (from Go): three allow.
		r.pyVote(t, p.ID, "late-a", govern.VoteAbstain, nil)
		r.goVote(t, &p, "late-b", govern.VoteAllow, nil)
		if err := receive(r.ctx, t, emitted, "governed emit"); err != nil {
			t.Fatalf("the governed emit after three approvals and the mandatory one: %v", err)
		}
		_, res := r.goTally(t, p.ID)
		if res.State != govern.Committed || !slices.Equal(res.Approve, []string{"go-voter", "late-b", "py-voter"}) || !slices.Equal(res.Abstain, []string{"late-a"}) {
			t.Fatalf("laser-go tallied %+v, want committed by go-voter, late-b, py-voter with late-a abstaining", res)
		}
		outcome, _, considered := r.pyDecision(t, p.ID)
		if want := []string{"go-voter=allow", "late-a=abstain", "late-b=allow", "py-voter=allow"}; outcome != "committed" || !slices.Equal(considered, want) {
			t.Fatalf("the reference decided %q over %v, want committed over %v", outcome, considered, want)
		}
	})

	t.Run("a Python intent gets Go votes", func(t *testing.T) {
		conv := conversation.Derive(r.ep.stream + "/py-intent")
		res := r.py.call(r.ctx, t, "intent_propose", map[string]any{"topic": govern.TopicProposals, "conversation": conv.String(),
			"proposer": "py-proposer", "body": "rotate the signing keys", "voters": []string{"go-a", "go-b", "py-c"},
			"mandatory": []string{"go-a"}, "policy": map[string]any{"at_least": 2}, "policy_version": 9,
			"deadline_micros": time.Now().Add(time.Minute).UnixMicro()})
		id := str(res, "intent", "intent_id")
		p, tally := r.goTally(t, id)
		if string(p.Body) != "rotate the signing keys" || p.Digest != str(res, "intent", "digest") || p.Digest != govern.BodyDigest(p.Body) ||
			p.Rule != govern.NOfM || p.N != 2 || p.PolicyVersion != 9 || !slices.Equal(p.Mandatory, []string{"go-a"}) ||
			p.Conversation != conv.String() || p.Proposer != "py-proposer" || tally.State != govern.Pending {
			t.Fatalf("laser-go read the Python intent as %+v (%s), want its body, digest, at_least 2, version 9, mandatory go-a, pending", p, tally.State)
		}

		// Two allow, but not the mandatory go-a: both sides wait.
		r.goVote(t, &p, "go-b", govern.VoteAllow, nil)
		r.pyVote(t, id, "py-c", govern.VoteAllow, nil)
		// go-a allows for another digest and another policy version:
		// counted, either would commit it.
		r.goVote(t, &p, "go-a", govern.VoteAllow, func(v *govern.Vote) { v.Digest = govern.BodyDigest([]byte("something else")) })
		r.goVote(t, &p, "go-a", govern.VoteAllow, func(v *govern.Vote) { v.PolicyVersion = 8 })
		if outcome, _, considered := r.pyDecision(t, id); outcome != "" {
			t.Fatalf("the reference decided %q over %v without the mandatory voter, want undecided", outcome, considered)
		}
		if _, res := r.goTally(t, id); res.State != govern.Pending {
			t.Fatalf("laser-go tallied %+v without the mandatory voter, want pending", res)
		}

		// The mandatory voter abstains: rejected on both sides.
		r.goVote(t, &p, "go-a", govern.VoteAbstain, nil)
		outcome, reason, considered := r.pyDecision(t, id)
		if want := []string{"go-a=abstain", "go-b=allow", "py-c=allow"}; outcome != "aborted" || !strings.Contains(reason, "mandatory") || !slices.Equal(considered, want) {
			t.Fatalf("the reference decided %q (%s) over %v, want aborted by the mandatory voter over %v", outcome, reason, considered, want)
		}
		if _, res := r.goTally(t, id); res.State != govern.Rejected || !strings.Contains(res.Reason, "mandatory") {
			t.Fatalf("laser-go tallied %+v, want rejected by the mandatory voter", res)
		}
	})

	t.Run("an intent whose body no longer matches its digest is refused by both", func(t *testing.T) {
		body := []byte("pay 10")
		p := govern.Proposal{ID: r.client.IDs().NewID().String(), Conversation: r.client.IDs().NewID().String(), Proposer: "go-proposer", Body: body,
			Digest: govern.BodyDigest(body), Voters: []string{"go-a"}, Rule: govern.Any, At: time.Now(), Deadline: time.Now().Add(time.Minute)}
		p.Body = []byte("pay 10000")
		enc, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := govern.DecodeProposal(enc); err == nil {
			t.Fatal("laser-go decoded an intent whose body does not match its digest")
		}
		if _, err := r.client.Send(r.ctx, runtime.Out{Kind: wire.KindEvent, Topic: govern.TopicProposals, From: "go-proposer", Body: enc}, runtime.WithOperation(govern.OperationProposal), runtime.WithContentType(wire.ContentJSON)); err != nil {
			t.Fatal(err)
		}
		read := r.py.call(r.ctx, t, "intent_read", map[string]any{"topic": govern.TopicProposals})
		refused := read["refused"].([]any)
		if !slices.ContainsFunc(refused, func(x any) bool { return x.(map[string]any)["intent_id"] == p.ID }) {
			t.Fatalf("the reference did not refuse the altered intent %s: refused %v", p.ID, refused)
		}
		props, _, err := govern.ReadProposals(r.ctx, r.client.Transport(), govern.TopicProposals, nil)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(props, func(q govern.Proposal) bool { return q.ID == p.ID }) {
			t.Fatal("laser-go read the altered intent as a proposal")
		}
	})
}

// strs reads a JSON list of strings.
func strs(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
