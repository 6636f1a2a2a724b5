package featuretest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/humaninput"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// HumanInput runs the rules of asking a human (package humaninput), each
// scenario on a fresh transport from newTransport and with a topic of its
// own.
func HumanInput(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	RunScenarios(t, newTransport, newHumanInputWorld, []Scenario[*humanInputWorld]{
		{Name: "ApprovalResumesWithTheAnswer", Fn: humanInputApprove},
		{Name: "RefusalIsADistinctError", Fn: humanInputRefuse},
		{Name: "NoAnswerTimesOutCleanly", Fn: humanInputTimeout},
		{Name: "GateAsksWithinTheHandledConversation", Fn: humanInputGate},
		{Name: "UnderAVerifierOnlyVerifiedAnswersCount", Fn: humanInputVerified},
		{Name: "PendingListsOnlyUnansweredRequestsStillAwaited", Fn: humanInputPending},
		{Name: "RequestDeadlineIsTheAskersContextDeadline", Fn: humanInputContextDeadline},
		{Name: "AnAgentKeyCannotApprove", Fn: humanInputAgentKeyCannotApprove},
		{Name: "ConfiguredApproversAnswer", Fn: humanInputApprovers},
		{Name: "ListJudgesAnswersAsTheAskerDoes", Fn: humanInputListVerifies},
		{Name: "ListIsBoundedAndReportsWhatItRefused", Fn: humanInputListBounded},
	})
}

func newHumanInputWorld(w *World) *humanInputWorld {
	x := &humanInputWorld{World: w, topic: Name("human")}
	if err := w.Tr.EnsureTopics(w.Ctx, 2, x.topic); err != nil {
		w.T.Fatal(err)
	}
	return x
}

type humanInputWorld struct {
	*World
	topic string
}

// human answers the first pending request with decision, as from; the
// scenario waits for it to finish before it ends.
func (w *humanInputWorld) human(client *runtime.Client, from string, refuse bool, decision string, key *sign.Key) {
	done := make(chan struct{})
	w.T.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		for w.Ctx.Err() == nil {
			pending, err := humaninput.Pending(w.Ctx, w.Tr, w.topic)
			if err == nil && len(pending) > 0 {
				// The asker may return, ending the test's context, as soon as
				// the answer lands: an answer begun is finished.
				if err := humaninput.Answer(context.WithoutCancel(w.Ctx), client, w.topic, from, pending[0], refuse, []byte(decision), key); err != nil {
					w.T.Error(err)
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
}

func (w *humanInputWorld) ask(client *runtime.Client, timeout time.Duration) ([]byte, error) {
	return humaninput.Ask(w.Ctx, client, humaninput.Request{Topic: w.topic, From: "planner", Prompt: []byte("publish?"), Timeout: timeout})
}

func humanInputApprove(w *humanInputWorld) {
	w.human(w.Client, "alice", false, "approved", nil)
	got, err := w.ask(w.Client, time.Minute)
	if err != nil || string(got) != "approved" {
		w.T.Fatalf("ask: %q, %v, want approved", got, err)
	}
}

func humanInputRefuse(w *humanInputWorld) {
	w.human(w.Client, "alice", true, "denied by policy", nil)
	_, err := w.ask(w.Client, time.Minute)
	var refused *humaninput.RefusedError
	if !errors.Is(err, humaninput.ErrRefused) || !errors.As(err, &refused) || refused.Reason != "denied by policy" || refused.By != "alice" {
		w.T.Fatalf("ask: %v, want alice's refusal 'denied by policy'", err)
	}
}

func humanInputTimeout(w *humanInputWorld) {
	asked := w.Client.Clock().Now()
	_, err := w.ask(w.Client, 200*time.Millisecond)
	if runtime.CodeOf(err) != runtime.CodeTimeout {
		w.T.Fatalf("ask with no approver: %v, want CodeTimeout", err)
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

func humanInputGate(w *humanInputWorld) {
	inbox, replies := Name("inbox"), Name("replies")
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
	reply, err := w.Client.Request(w.Ctx, runtime.Out{Topic: inbox, From: "caller", Target: "gatekeeper", Body: []byte("go")},
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

func humanInputVerified(w *humanInputWorld) {
	alice := SeededKey(3)
	keys := sign.NewRegistry()
	if err := keys.EnrollOperator("alice", alice.Public()); err != nil {
		w.T.Fatal(err)
	}
	strict := runtime.NewClient(w.Tr, runtime.ClientConfig{Verifier: keys})
	defer strict.Close()
	w.human(w.Client, "alice", false, "unsigned yes", nil)
	if _, err := w.ask(strict, 300*time.Millisecond); runtime.CodeOf(err) != runtime.CodeTimeout {
		w.T.Fatalf("under a verifier an unsigned answer: %v, want it ignored (CodeTimeout)", err)
	}
	w.human(w.Client, "alice", false, "signed yes", alice)
	// The first request was answered (unsigned), so the helper answers the new one.
	got, err := w.ask(strict, time.Minute)
	if err != nil || string(got) != "signed yes" {
		w.T.Fatalf("under a verifier a signed answer: %q, %v", got, err)
	}
}

func humanInputPending(w *humanInputWorld) {
	asked := w.Client.Clock().Now()
	if _, err := w.ask(w.Client, 50*time.Millisecond); runtime.CodeOf(err) != runtime.CodeTimeout {
		w.T.Fatal(err)
	}
	if _, err := w.ask(w.Client, 50*time.Millisecond); runtime.CodeOf(err) != runtime.CodeTimeout {
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

// The request's deadline is the end of its asker's wait: an asker whose
// context ends in 300 ms with the default timeout publishes a request that
// stops being pending then, not 30 s later.
func humanInputContextDeadline(w *humanInputWorld) {
	ctx, cancel := context.WithTimeout(w.Ctx, 300*time.Millisecond)
	defer cancel()
	end, _ := ctx.Deadline()
	asked := w.Client.Clock().Now()
	if _, err := humaninput.Ask(ctx, w.Client, humaninput.Request{Topic: w.topic, From: "planner", Prompt: []byte("publish?")}); !errors.Is(err, context.DeadlineExceeded) {
		w.T.Fatalf("ask: %v, want the context's deadline", err)
	}
	pending, err := humaninput.PendingAt(w.Ctx, w.Tr, w.topic, asked)
	if err != nil || len(pending) != 1 {
		w.T.Fatalf("pending while the asker waited: %d (%v), want 1", len(pending), err)
	}
	if d := pending[0].Envelope.DeadlineMicros; d == nil || *d > uint64(end.UnixMicro()) {
		w.T.Fatalf("request deadline %v, want at most the asker's context deadline %d", d, end.UnixMicro())
	}
	if later, err := humaninput.PendingAt(w.Ctx, w.Tr, w.topic, end.Add(time.Millisecond)); err != nil || len(later) != 0 {
		w.T.Fatalf("pending after the asker's context ended: %d (%v), want none", len(later), err)
	}
}

// keys enrolls alice with an operator key and mallory and bob with agent
// keys, and returns a client verifying under them.
func (w *humanInputWorld) keys() (strict *runtime.Client, keys *sign.Registry, alice, mallory, bob *sign.Key) {
	alice, mallory, bob = SeededKey(3), SeededKey(4), SeededKey(5)
	keys = sign.NewRegistry()
	for _, err := range []error{keys.EnrollOperator("alice", alice.Public()), keys.Enroll("mallory", mallory.Public()), keys.Enroll("bob", bob.Public())} {
		if err != nil {
			w.T.Fatal(err)
		}
	}
	strict = runtime.NewClient(w.Tr, runtime.ClientConfig{Verifier: keys})
	w.T.Cleanup(func() { _ = strict.Close() })
	return strict, keys, alice, mallory, bob
}

// asking runs req on client in the background and returns the request once
// it is on the topic, and the channel of the answer.
func (w *humanInputWorld) asking(client *runtime.Client, req humaninput.Request) (*runtime.Message, <-chan askResult) {
	req.Topic, req.From, req.Timeout = w.topic, "planner", time.Minute
	if req.Prompt == nil {
		req.Prompt = []byte("publish?")
	}
	done, finished := make(chan askResult, 1), make(chan struct{})
	ctx, cancel := context.WithCancel(w.Ctx)
	w.T.Cleanup(func() { cancel(); <-finished })
	go func() {
		defer close(finished)
		b, err := humaninput.Ask(ctx, client, req)
		done <- askResult{b, err}
	}()
	for w.Ctx.Err() == nil {
		pending, err := humaninput.Pending(w.Ctx, w.Tr, w.topic)
		if err != nil {
			w.T.Fatal(err)
		}
		for _, m := range pending {
			if string(m.Body()) == string(req.Prompt) {
				return m, done
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	w.T.Fatal("the request never reached the topic")
	return nil, nil
}

type askResult struct {
	answer []byte
	err    error
}

func (w *humanInputWorld) answer(req *runtime.Message, from, decision string, key *sign.Key) {
	w.T.Helper()
	if err := humaninput.Answer(w.Ctx, w.Client, w.topic, from, req, false, []byte(decision), key); err != nil {
		w.T.Fatal(err)
	}
}

func (w *humanInputWorld) list(v runtime.Verifier) *humaninput.Listing {
	w.T.Helper()
	l, err := humaninput.List(w.Ctx, w.Tr, humaninput.ListOptions{Topic: w.topic, Verifier: v})
	if err != nil {
		w.T.Fatal(err)
	}
	return l
}

// A peer agent's enrolled key does not approve a gate with no approver
// named: only an operator key does. The asker keeps waiting past the
// agent's signed "approved", and List under the same verifier still shows
// the request.
func humanInputAgentKeyCannotApprove(w *humanInputWorld) {
	strict, keys, alice, mallory, _ := w.keys()
	req, done := w.asking(strict, humaninput.Request{})
	w.answer(req, "mallory", "approved", mallory)
	if l := w.list(keys); len(l.Pending) != 1 || l.RefusedAnswers != 1 {
		w.T.Fatalf("after an agent key's answer: %d pending, %d refused; want the request still pending and the answer refused", len(l.Pending), l.RefusedAnswers)
	}
	w.answer(req, "alice", "approved by the operator", alice)
	if r := <-done; r.err != nil || string(r.answer) != "approved by the operator" {
		w.T.Fatalf("ask: %q, %v; want the operator's answer, not the agent's", r.answer, r.err)
	}
	if l := w.list(keys); len(l.Pending) != 0 {
		w.T.Fatalf("after the operator's answer %d pending, want none", len(l.Pending))
	}
}

// A request naming its approvers takes the answer of one of them, agent
// key or not, and no one else's, operator keys included.
func humanInputApprovers(w *humanInputWorld) {
	strict, keys, alice, mallory, bob := w.keys()
	req, done := w.asking(strict, humaninput.Request{Approvers: []string{"bob"}})
	w.answer(req, "mallory", "approved", mallory)
	w.answer(req, "alice", "approved", alice)
	if l := w.list(keys); len(l.Pending) != 1 || l.RefusedAnswers != 2 {
		w.T.Fatalf("after two answers from outside the approvers: %d pending, %d refused; want 1 and 2", len(l.Pending), l.RefusedAnswers)
	}
	w.answer(req, "bob", "bob says yes", bob)
	if r := <-done; r.err != nil || string(r.answer) != "bob says yes" {
		w.T.Fatalf("ask: %q, %v; want the approver's answer", r.answer, r.err)
	}
}

// Under a verifier the asker ignores an unsigned answer and keeps waiting;
// List given that verifier keeps the request too, so whoever can write the
// topic cannot hide it from the approvers.
func humanInputListVerifies(w *humanInputWorld) {
	strict, keys, alice, _, _ := w.keys()
	req, done := w.asking(strict, humaninput.Request{})
	w.answer(req, "alice", "forged yes", nil)
	if l := w.list(keys); len(l.Pending) != 1 || l.RefusedAnswers != 1 {
		w.T.Fatalf("under the verifier after an unsigned answer: %d pending, %d refused; want 1 and 1", len(l.Pending), l.RefusedAnswers)
	}
	if l := w.list(nil); len(l.Pending) != 0 {
		w.T.Fatalf("without a verifier any answer counts: %d pending, want none", len(l.Pending))
	}
	w.answer(req, "alice", "signed yes", alice)
	if r := <-done; r.err != nil || string(r.answer) != "signed yes" {
		w.T.Fatalf("ask: %q, %v", r.answer, r.err)
	}
}

// A topic flooded with requests holds List to its bounds: the requests
// beyond them are counted, not held, and what was held first is listed.
func humanInputListBounded(w *humanInputWorld) {
	if _, err := w.ask(w.Client, 50*time.Millisecond); runtime.CodeOf(err) != runtime.CodeTimeout {
		w.T.Fatal(err)
	}
	const junk = 500
	out := make([]runtime.Outgoing, 0, junk)
	for i := range junk {
		corr, conv := w.Client.IDs().NewID(), w.Client.IDs().NewID()
		env := &wire.Envelope{Kind: wire.KindCommand, Record: &corr, Correlation: &corr, Conversation: conv, Source: "mallory",
			Body: fmt.Appendf(nil, "junk %d %s", i, strings.Repeat("x", 1000))}
		payload, err := env.Marshal()
		if err != nil {
			w.T.Fatal(err)
		}
		out = append(out, runtime.Outgoing{Key: wire.PartitionKey(conv), Headers: wire.EnvelopeHeaders(env, wire.ContentRaw), Payload: payload})
	}
	if _, err := w.Client.Publish(w.Ctx, w.topic, out...); err != nil {
		w.T.Fatal(err)
	}
	past := w.Client.Clock().Now().Add(-time.Minute) // the real request is still awaited then
	l, err := humaninput.List(w.Ctx, w.Tr, humaninput.ListOptions{Topic: w.topic, Now: past, MaxRequests: 100})
	if err != nil {
		w.T.Fatal(err)
	}
	if len(l.Pending) != 100 || l.Unlisted != junk+1-100 {
		w.T.Fatalf("bounded to 100 requests: %d pending, %d unlisted; want 100 and %d", len(l.Pending), l.Unlisted, junk+1-100)
	}
	l, err = humaninput.List(w.Ctx, w.Tr, humaninput.ListOptions{Topic: w.topic, Now: past, MaxBytes: 20_000})
	if err != nil {
		w.T.Fatal(err)
	}
	held := 0
	for _, m := range l.Pending {
		held += len(m.Payload)
	}
	if held > 20_000 || len(l.Pending) == 0 || len(l.Pending)+l.Unlisted != junk+1 {
		w.T.Fatalf("bounded to 20 kB: %d pending holding %d bytes, %d unlisted", len(l.Pending), held, l.Unlisted)
	}
}
