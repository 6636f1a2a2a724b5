// Package humaninputtest runs the rules of asking a human (package
// humaninput) over a transport.
package humaninputtest

import (
	"errors"
	"testing"
	"time"

	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/registry/registrytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
)

// Run runs every scenario, each on a fresh transport from newTransport and
// with a topic of its own.
func Run(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	registrytest.RunScenarios(t, newTransport, newWorld, []registrytest.Scenario[*world]{
		{Name: "ApprovalResumesWithTheAnswer", Fn: scenarioApprove},
		{Name: "RefusalIsADistinctError", Fn: scenarioRefuse},
		{Name: "NoAnswerTimesOutCleanly", Fn: scenarioTimeout},
		{Name: "GateAsksWithinTheHandledConversation", Fn: scenarioGate},
		{Name: "UnderAVerifierOnlyVerifiedAnswersCount", Fn: scenarioVerified},
		{Name: "PendingListsOnlyUnansweredRequestsStillAwaited", Fn: scenarioPending},
	})
}

func newWorld(w *registrytest.World) *world {
	x := &world{World: w, topic: registrytest.Name("human")}
	if err := w.Tr.EnsureTopics(w.Ctx, 2, x.topic); err != nil {
		w.T.Fatal(err)
	}
	return x
}

type world struct {
	*registrytest.World
	topic string
}

// human answers the first pending request with decision, as from; the
// scenario waits for it to finish before it ends.
func (w *world) human(client *runtime.Client, from string, refuse bool, decision string, key *sign.Key) {
	done := make(chan struct{})
	w.T.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		for w.Ctx.Err() == nil {
			pending, err := humaninput.Pending(w.Ctx, w.Tr, w.topic)
			if err == nil && len(pending) > 0 {
				if err := humaninput.Answer(w.Ctx, client, w.topic, from, pending[0], refuse, []byte(decision), key); err != nil {
					w.T.Error(err)
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
}

func (w *world) ask(client *runtime.Client, timeout time.Duration) ([]byte, error) {
	return humaninput.Ask(w.Ctx, client, humaninput.Request{Topic: w.topic, From: "planner", Prompt: []byte("publish?"), Timeout: timeout})
}

func scenarioApprove(w *world) {
	w.human(w.Client, "alice", false, "approved", nil)
	got, err := w.ask(w.Client, time.Minute)
	if err != nil || string(got) != "approved" {
		w.T.Fatalf("ask: %q, %v, want approved", got, err)
	}
}

func scenarioRefuse(w *world) {
	w.human(w.Client, "alice", true, "denied by policy", nil)
	_, err := w.ask(w.Client, time.Minute)
	var refused *humaninput.Refused
	if !errors.Is(err, humaninput.ErrRefused) || !errors.As(err, &refused) || refused.Reason != "denied by policy" || refused.By != "alice" {
		w.T.Fatalf("ask: %v, want alice's refusal 'denied by policy'", err)
	}
}

func scenarioTimeout(w *world) {
	asked := w.Client.Clock().Now()
	_, err := w.ask(w.Client, 200*time.Millisecond)
	if !errors.Is(err, runtime.ErrTimeout) {
		w.T.Fatalf("ask with no approver: %v, want ErrTimeout", err)
	}
	// The request stays on the topic, pending until its asker gave up, and
	// is not offered to a human after that.
	if pending, err := humaninput.PendingAt(w.Ctx, w.Tr, w.topic, asked); err != nil || len(pending) != 1 {
		w.T.Fatalf("pending while the asker waited: %d (%v), want the unanswered request", len(pending), err)
	}
	if pending, err := humaninput.Pending(w.Ctx, w.Tr, w.topic); err != nil || len(pending) != 0 {
		w.T.Fatalf("pending after the timeout: %d (%v), want none: nobody waits for the answer", len(pending), err)
	}
}

func scenarioGate(w *world) {
	inbox, replies := registrytest.Name("inbox"), registrytest.Name("replies")
	if err := w.Tr.EnsureTopics(w.Ctx, 1, inbox, replies, runtime.TopicHumanInput); err != nil {
		w.T.Fatal(err)
	}
	// Gate uses the well-known topic; a scenario-unique prompt tells its
	// request apart from other runs' on a shared server.
	a, err := w.Client.NewAgent(runtime.AgentConfig{ID: "gatekeeper", Listen: inbox, Respond: replies,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			answer, err := humaninput.Gate(c, []byte(inbox), time.Minute)
			if err != nil {
				return err
			}
			return c.Respond(append([]byte("resumed after "), answer...))
		})})
	if err != nil {
		w.T.Fatal(err)
	}
	h := a.Start(w.Ctx)
	if err := h.Ready(w.Ctx); err != nil {
		w.T.Fatal(err)
	}
	defer h.Shutdown(w.Ctx)
	done := make(chan struct{})
	defer func() { <-done }()
	asked := make(chan *runtime.Message, 1)
	go func() {
		defer close(done)
		for w.Ctx.Err() == nil {
			pending, _ := humaninput.Pending(w.Ctx, w.Tr, runtime.TopicHumanInput)
			for _, m := range pending {
				if string(m.Body()) == inbox {
					asked <- m
					_ = humaninput.Answer(w.Ctx, w.Client, "", "alice", m, false, []byte("ok"), nil)
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	conv := w.Client.IDs().NewID()
	reply, err := w.Client.Request(w.Ctx, runtime.Command{Topic: inbox, From: "caller", Target: "gatekeeper", Body: []byte("go")},
		runtime.WithReplyTopic(replies), runtime.WithConversation(conv), runtime.WithTimeout(time.Minute))
	if err != nil || string(reply.Body()) != "resumed after ok" {
		w.T.Fatalf("gatekeeper: %v, %v", reply, err)
	}
	if m := <-asked; m.Envelope.Conversation != conv || string(m.Envelope.Source) != "gatekeeper" {
		w.T.Fatalf("the approval request came from %s in conversation %s, want gatekeeper in the handled %s", m.Envelope.Source, m.Envelope.Conversation, conv)
	}
	pending, err := humaninput.Pending(w.Ctx, w.Tr, runtime.TopicHumanInput)
	if err != nil {
		w.T.Fatal(err)
	}
	for _, m := range pending {
		if string(m.Body()) == inbox {
			w.T.Fatal("the answered request is still pending")
		}
	}
}

func scenarioVerified(w *world) {
	alice := registrytest.SeededKey(3)
	keys := sign.NewRegistry()
	if err := keys.Enroll("alice", alice.Public()); err != nil {
		w.T.Fatal(err)
	}
	strict := runtime.NewClient(w.Tr, runtime.ClientOptions{Verifier: keys})
	defer strict.Close()
	w.human(w.Client, "alice", false, "unsigned yes", nil)
	if _, err := w.ask(strict, 300*time.Millisecond); !errors.Is(err, runtime.ErrTimeout) {
		w.T.Fatalf("under a verifier an unsigned answer: %v, want it ignored (ErrTimeout)", err)
	}
	w.human(w.Client, "alice", false, "signed yes", alice)
	// The first request was answered (unsigned), so the helper answers the new one.
	got, err := w.ask(strict, time.Minute)
	if err != nil || string(got) != "signed yes" {
		w.T.Fatalf("under a verifier a signed answer: %q, %v", got, err)
	}
}

func scenarioPending(w *world) {
	asked := w.Client.Clock().Now()
	if _, err := w.ask(w.Client, 50*time.Millisecond); !errors.Is(err, runtime.ErrTimeout) {
		w.T.Fatal(err)
	}
	if _, err := w.ask(w.Client, 50*time.Millisecond); !errors.Is(err, runtime.ErrTimeout) {
		w.T.Fatal(err)
	}
	// Judged while both askers still waited, both are pending.
	pending, err := humaninput.PendingAt(w.Ctx, w.Tr, w.topic, asked)
	if err != nil || len(pending) != 2 {
		w.T.Fatalf("pending %d (%v), want 2", len(pending), err)
	}
	if err := humaninput.Answer(w.Ctx, w.Client, w.topic, "alice", pending[0], false, []byte("late"), nil); err != nil {
		w.T.Fatal(err)
	}
	after, err := humaninput.PendingAt(w.Ctx, w.Tr, w.topic, asked)
	if err != nil || len(after) != 1 || *after[0].Envelope.Correlation != *pending[1].Envelope.Correlation {
		w.T.Fatalf("after answering one, pending %d (%v), want the other", len(after), err)
	}
	// Now both askers have stopped waiting: nothing is pending any more.
	if now, err := humaninput.Pending(w.Ctx, w.Tr, w.topic); err != nil || len(now) != 0 {
		w.T.Fatalf("after the askers' deadlines, pending %d (%v), want none", len(now), err)
	}
}
