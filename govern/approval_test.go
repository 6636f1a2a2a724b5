package govern_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// start runs an agent on w's client until the test ends.
func (w *world) start(cfg runtime.AgentConfig) {
	w.t.Helper()
	a, err := w.c.NewAgent(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	h := a.Start(w.ctx)
	w.t.Cleanup(func() { _ = h.Stop() })
	if err := h.Ready(w.ctx); err != nil {
		w.t.Fatal(err)
	}
}

// human answers every approval request on agent.human_input, granting or
// refusing it, and hands each request's prompt to prompts.
func (w *world) human(grant bool, prompts chan<- []byte) {
	// The human is another principal: the client's policy does not govern
	// its answers.
	ungoverned := govern.NewGate(fixed(govern.Allow()), govern.Config{})
	w.start(runtime.AgentConfig{ID: "alice", Listen: runtime.TopicHumanInput, EffectGate: ungoverned, Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
		if hc.Message().Kind() != wire.KindCommand {
			return nil
		}
		prompts <- hc.Message().Body()
		return humaninput.Answer(hc, hc.Client(), "", "alice", hc.Message(), !grant, []byte("decided"), nil)
	})})
}

func TestStepUpRunsTheEffectOnceAHumanApproves(t *testing.T) {
	w := governed(t, fixed(govern.StepUp("payments:wire", "above the limit")), govern.Config{})
	prompts := make(chan []byte, 1)
	w.human(true, prompts)
	if _, err := w.emit(); err != nil {
		t.Fatalf("emit after approval: %v", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 1 {
		t.Fatalf("%d messages published, want the approved one", len(got))
	}
	if p := <-prompts; len(p) == 0 {
		t.Fatal("the approval request had no prompt")
	}
	if ev := w.onlyEvidence(); ev.Verdict != govern.VerdictStepUp || ev.Outcome != govern.OutcomeApproved || ev.Scope != "payments:wire" {
		t.Fatalf("evidence %+v, want step_up/approved for payments:wire", ev)
	}
}

func TestStepUpRefusedPublishesNothing(t *testing.T) {
	w := governed(t, fixed(govern.StepUp("payments:wire", "")), govern.Config{})
	w.human(false, make(chan []byte, 1))
	_, err := w.emit()
	if !errors.Is(err, govern.ErrRefused) || !errors.Is(err, humaninput.ErrRefused) {
		t.Fatalf("emit after a refusal: %v, want ErrRefused wrapping the human's refusal", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
	if ev := w.onlyEvidence(); ev.Outcome != govern.OutcomeRefused {
		t.Fatalf("evidence %+v, want step_up/refused", ev)
	}
}

func TestStepUpWithNoAnswerIsRefusedAtTheTimeout(t *testing.T) {
	w := governed(t, fixed(govern.StepUp("payments:wire", "")), govern.Config{ApprovalTimeout: 50 * time.Millisecond})
	_, err := w.emit()
	if !errors.Is(err, govern.ErrRefused) || !errors.Is(err, &runtime.Error{Code: runtime.CodeTimeout}) {
		t.Fatalf("emit with nobody to approve: %v, want ErrRefused after a timeout", err)
	}
}

// voters runs one agent per voter on the proposal topic, each voting
// choices[voter] on every proposal it reads.
func (w *world) voters(choices map[string]govern.Choice) {
	for voter, choice := range choices {
		w.start(runtime.AgentConfig{ID: voter, Listen: govern.TopicProposals, Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
			env := hc.Message().Envelope
			if env == nil || env.Operation == nil || *env.Operation != govern.OperationProposal {
				return nil
			}
			p, err := govern.DecodeProposal(env.Body)
			if err != nil {
				return runtime.Reject(err)
			}
			v, err := govern.NewVote(&p, voter, choice)
			if err != nil {
				return err
			}
			return govern.CastVote(hc, hc.Client(), "", v, nil)
		})})
	}
}

func TestAProposalCommittedByTwoOfThreeReleasesTheEffect(t *testing.T) {
	q := govern.Quorum{Rule: govern.NOfM, N: 2, Voters: []string{"ann", "bob", "cy"}, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "large transfer")), govern.Config{})
	if err := w.tr.EnsureTopics(w.ctx, 1, govern.TopicProposals); err != nil {
		t.Fatal(err)
	}
	w.voters(map[string]govern.Choice{"ann": govern.VoteAllow, "bob": govern.VoteAllow})
	if _, err := w.emit(); err != nil {
		t.Fatalf("emit after two approvals: %v", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 1 {
		t.Fatalf("%d messages published, want the approved one", len(got))
	}
	ev := w.onlyEvidence()
	if ev.Verdict != govern.VerdictPropose || ev.Outcome != govern.OutcomeApproved || ev.Proposal == "" {
		t.Fatalf("evidence %+v, want propose/approved naming the proposal", ev)
	}
}

func TestAProposalRejectedByTheVotersStopsTheEffect(t *testing.T) {
	q := govern.Quorum{Rule: govern.NOfM, N: 2, Voters: []string{"ann", "bob", "cy"}, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "")), govern.Config{})
	if err := w.tr.EnsureTopics(w.ctx, 1, govern.TopicProposals); err != nil {
		t.Fatal(err)
	}
	w.voters(map[string]govern.Choice{"ann": govern.VoteBlock, "bob": govern.VoteBlock})
	if _, err := w.emit(); !errors.Is(err, govern.ErrRefused) {
		t.Fatalf("emit after two rejections: %v, want ErrRefused", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
	if ev := w.onlyEvidence(); ev.Outcome != govern.OutcomeRefused {
		t.Fatalf("evidence %+v, want propose/refused", ev)
	}
}

func TestAMandatoryVoterWhoAbstainsStopsTheEffect(t *testing.T) {
	q := govern.Quorum{Rule: govern.NOfM, N: 2, Voters: []string{"ann", "bob", "cy"}, Mandatory: []string{"ann"}, PolicyVersion: 6, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "")), govern.Config{})
	if err := w.tr.EnsureTopics(w.ctx, 1, govern.TopicProposals); err != nil {
		t.Fatal(err)
	}
	w.voters(map[string]govern.Choice{"ann": govern.VoteAbstain, "bob": govern.VoteAllow, "cy": govern.VoteAllow})
	if _, err := w.emit(); !errors.Is(err, govern.ErrRefused) {
		t.Fatalf("emit after two approvals and the mandatory voter's abstention: %v, want ErrRefused", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
	props, _, err := govern.ReadProposals(w.ctx, w.tr, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(props) != 1 || !slices.Equal(props[0].Mandatory, []string{"ann"}) || props[0].PolicyVersion != 6 {
		t.Fatalf("proposals on the log %+v, want one naming ann mandatory under policy version 6", props)
	}
}

func TestAnAgentsGateOverridesTheClients(t *testing.T) {
	w := governed(t, fixed(govern.Allow()), govern.Config{})
	done := make(chan error, 1)
	strict := govern.NewGate(fixed(govern.Block("this agent may not send")), govern.Config{})
	if err := w.tr.EnsureTopics(w.ctx, 1, "agent.inbox"); err != nil {
		t.Fatal(err)
	}
	w.start(runtime.AgentConfig{ID: "payer", Listen: "agent.inbox", EffectGate: strict, Handler: runtime.HandlerFunc(func(hc *runtime.Ctx) error {
		_, err := hc.Send(runtime.TopicCommands, "bank", []byte("wire-funds"))
		done <- err
		return nil
	})})
	if _, err := w.c.Send(w.ctx, runtime.Out{Kind: wire.KindEvent, Topic: "agent.inbox", From: "planner", Body: []byte("go")}); err != nil {
		t.Fatalf("the client's own effect: %v, want it allowed", err)
	}
	if err := <-done; !errors.Is(err, govern.ErrBlocked) {
		t.Fatalf("the agent's send: %v, want its own gate to block it", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
}

func TestAProposalNobodyVotesOnExpiresAtItsDeadline(t *testing.T) {
	clock := lasertest.NewManualClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	q := govern.Quorum{Rule: govern.Majority, Voters: []string{"ann", "bob", "cy"}, Within: time.Minute}
	w := governed(t, fixed(govern.Propose(q, "")), govern.Config{Clock: clock})
	errc := make(chan error, 1)
	go func() {
		_, err := w.emit()
		errc <- err
	}()
	// The gate waits between its reads of the votes; past the deadline the
	// next read expires the proposal.
	if err := clock.BlockUntil(w.ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	if err := <-errc; !errors.Is(err, govern.ErrRefused) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("emit: %v, want ErrRefused for an expired proposal", err)
	}
	if got := w.messages(runtime.TopicCommands); len(got) != 0 {
		t.Fatalf("%d messages published, want none", len(got))
	}
	if ev := w.onlyEvidence(); ev.Outcome != govern.OutcomeRefused {
		t.Fatalf("evidence %+v, want propose/refused", ev)
	}
}
