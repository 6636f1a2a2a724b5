package featuretest

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/fanout"
	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Fanout runs the rules of fanning a request out to every capable agent and
// gathering by policy (package fanout), each scenario on a fresh transport
// from newTransport and with topics of its own.
func Fanout(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	RunScenarios(t, newTransport, newFanoutWorld, []Scenario[*fanoutWorld]{
		{Name: "RequireAllGathersSuccessesAndPerBranchFailures", Fn: fanoutRequireAll},
		{Name: "EachBranchIsASubconversationWithAFreshCorrelation", Fn: fanoutBranches},
		{Name: "QuorumReturnsAtNAndCancelsStragglers", Fn: fanoutQuorum},
		{Name: "QuorumZeroReturnsNothing", Fn: fanoutQuorumZero},
		{Name: "QuorumAboveTheTargetsWaitsForAll", Fn: fanoutQuorumAbove},
		{Name: "BestEffortCancelsStragglersAtTheDeadline", Fn: fanoutBestEffort},
		{Name: "NoCapableAgentIsAnError", Fn: fanoutNoCapable},
		{Name: "TypedCallEncodesTheInputAndDecodesEachReply", Fn: fanoutTyped},
		{Name: "FromAHandlerBranchesAreSubconversationsOfTheHandledOne", Fn: fanoutFromHandler},
	})
}

type fanoutWorld struct {
	*World
	inbox, replies string
	reg            *registry.Registry

	mu   sync.Mutex
	seen []*runtime.Message // commands the agents handled
}

func newFanoutWorld(w *World) *fanoutWorld {
	x := &fanoutWorld{World: w, inbox: Name("inbox"), replies: Name("replies")}
	if err := w.Tr.EnsureTopics(w.Ctx, 2, x.inbox, x.replies); err != nil {
		w.T.Fatal(err)
	}
	x.reg = w.Registry(registry.Config{})
	return x
}

// agent starts a reviewer that advertises "review" and answers with answer:
// "" stays silent, "!" fails the request.
func (w *fanoutWorld) agent(id, answer string) {
	w.T.Helper()
	w.Publish(id, Skill("review"))
	a, err := w.Client.NewAgent(runtime.AgentConfig{
		ID: id, Listen: w.inbox, Respond: w.replies,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			w.mu.Lock()
			w.seen = append(w.seen, c.Message())
			w.mu.Unlock()
			switch answer {
			case "":
				return nil
			case "!":
				return c.Fail(wire.ErrorInternal, "cannot review", false)
			}
			return c.Respond([]byte(answer))
		}),
	})
	if err != nil {
		w.T.Fatal(err)
	}
	h := a.Start(w.Ctx)
	if err := h.Ready(w.Ctx); err != nil {
		w.T.Fatal(err)
	}
	// The test's context has ended when cleanups run: wait for the agent's stop.
	w.T.Cleanup(func() { _ = h.Stop() })
}

func (w *fanoutWorld) send(policy fanout.Policy, within *runtime.Message, timeout time.Duration) *fanout.Gather {
	w.T.Helper()
	g, err := fanout.Send(w.Ctx, w.Client, w.reg, fanout.Request{Skill: "review", Topic: w.inbox, From: "planner", Body: []byte("draft"), Within: within},
		policy, runtime.WithReplyTopic(w.replies), runtime.WithTimeout(timeout))
	if err != nil {
		w.T.Fatal(err)
	}
	return g
}

func okAgents(g *fanout.Gather) []string {
	var out []string
	for _, r := range g.OK {
		out = append(out, r.Agent)
	}
	sort.Strings(out)
	return out
}

func fanoutRequireAll(w *fanoutWorld) {
	w.agent("rev-a", "lgtm a")
	w.agent("rev-b", "lgtm b")
	w.agent("rev-c", "!")
	g := w.send(fanout.RequireAll(), nil, time.Minute)
	if got := okAgents(g); !slices.Equal(got, []string{"rev-a", "rev-b"}) {
		w.T.Fatalf("successes from %v, want rev-a and rev-b", got)
	}
	for _, r := range g.OK {
		if string(r.Message.Body()) != "lgtm "+r.Agent[len(r.Agent)-1:] {
			w.T.Fatalf("%s answered %q", r.Agent, r.Message.Body())
		}
	}
	var remote *runtime.Error
	if len(g.Failures) != 1 || g.Failures[0].Agent != "rev-c" || !(errors.As(g.Failures[0].Err, &remote) && remote.Remote()) {
		w.T.Fatalf("failures %+v, want rev-c's remote error", g.Failures)
	}
}

func fanoutBranches(w *fanoutWorld) {
	w.agent("rev-a", "ok")
	w.agent("rev-b", "ok")
	parent := wire.IDFromUint128(7, 7)
	within := &runtime.Message{Provenance: wire.Provenance{Conversation: parent}}
	w.send(fanout.RequireAll(), within, time.Minute)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) != 2 {
		w.T.Fatalf("agents handled %d commands, want 2", len(w.seen))
	}
	a, b := w.seen[0], w.seen[1]
	if a.Provenance.Conversation == b.Provenance.Conversation || a.Provenance.Conversation == parent {
		w.T.Fatal("branches share a conversation or reuse the parent's")
	}
	if a.Correlation() == "" || a.Correlation() == b.Correlation() {
		w.T.Fatalf("branch correlations %q and %q are not fresh and distinct", a.Correlation(), b.Correlation())
	}
	for _, m := range w.seen {
		if m.Envelope.Target == nil || (string(*m.Envelope.Target) != "rev-a" && string(*m.Envelope.Target) != "rev-b") {
			w.T.Fatal("a branch is not targeted at its agent")
		}
		if s, _ := m.Envelope.Metadata.Get(wire.HeaderParentConversation).AsStr(); s != parent.String() {
			w.T.Fatalf("branch records parent %q, want %s", s, parent)
		}
	}
}

func fanoutQuorum(w *fanoutWorld) {
	w.agent("rev-a", "ok")
	w.agent("rev-b", "ok")
	w.agent("rev-silent", "")
	g := w.send(fanout.Quorum(2), nil, time.Hour)
	if got := okAgents(g); !slices.Equal(got, []string{"rev-a", "rev-b"}) {
		w.T.Fatalf("quorum(2) successes %v", got)
	}
	if !slices.Equal(g.Cancelled, []string{"rev-silent"}) || len(g.Failures) != 0 {
		w.T.Fatalf("cancelled %v failures %v, want the silent straggler cancelled", g.Cancelled, g.Failures)
	}
}

func fanoutQuorumZero(w *fanoutWorld) {
	w.agent("rev-a", "ok")
	g := w.send(fanout.Quorum(0), nil, time.Minute)
	if len(g.OK)+len(g.Failures)+len(g.Cancelled) != 0 {
		w.T.Fatalf("quorum(0) gathered %+v, want nothing", g)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) != 0 {
		w.T.Fatal("quorum(0) sent a request")
	}
}

func fanoutQuorumAbove(w *fanoutWorld) {
	w.agent("rev-a", "ok")
	w.agent("rev-b", "!")
	g := w.send(fanout.Quorum(5), nil, time.Minute)
	if len(g.OK) != 1 || len(g.Failures) != 1 || len(g.Cancelled) != 0 {
		w.T.Fatalf("quorum(5) over two agents gathered %+v, want both drained", g)
	}
}

func fanoutBestEffort(w *fanoutWorld) {
	w.agent("rev-a", "ok")
	w.agent("rev-silent", "")
	g := w.send(fanout.BestEffort(time.Second), nil, time.Hour)
	if got := okAgents(g); !slices.Equal(got, []string{"rev-a"}) || !slices.Equal(g.Cancelled, []string{"rev-silent"}) {
		w.T.Fatalf("best effort gathered %v and cancelled %v, want rev-a and rev-silent", got, g.Cancelled)
	}
}

func fanoutNoCapable(w *fanoutWorld) {
	_, err := fanout.Send(w.Ctx, w.Client, w.reg, fanout.Request{Skill: "review", Topic: w.inbox, From: "planner"}, fanout.RequireAll())
	if !errors.Is(err, registry.ErrNoCapableAgent) {
		w.T.Fatalf("fan-out with no capable agent: %v, want ErrNoCapableAgent", err)
	}
}

type verdict struct {
	Approve bool   `json:"approve"`
	Note    string `json:"note"`
}

func fanoutTyped(w *fanoutWorld) {
	w.agent("rev-a", `{"approve":true,"note":"a"}`)
	w.agent("rev-b", `not json`)
	g, err := fanout.Call[verdict](w.Ctx, w.Client, w.reg, fanout.Request{Skill: "review", Topic: w.inbox, From: "planner"},
		"review", wire.ContentJSON, map[string]string{"draft": "d"}, fanout.RequireAll(), runtime.WithReplyTopic(w.replies), runtime.WithTimeout(time.Minute))
	if err != nil {
		w.T.Fatal(err)
	}
	if len(g.OK) != 1 || g.OK[0].Agent != "rev-a" || !g.OK[0].Value.Approve || g.OK[0].Value.Note != "a" {
		w.T.Fatalf("typed successes %+v, want rev-a's decoded verdict", g.OK)
	}
	if len(g.Failures) != 1 || g.Failures[0].Agent != "rev-b" {
		w.T.Fatalf("typed failures %+v, want rev-b's undecodable reply", g.Failures)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.seen {
		if m.Operation() != "review" || string(m.Body()) != `{"draft":"d"}` {
			w.T.Fatalf("a branch got operation %q body %s", m.Operation(), m.Body())
		}
	}
}

func fanoutFromHandler(w *fanoutWorld) {
	w.agent("rev-a", "ok")
	w.agent("rev-b", "ok")
	front := Name("front")
	if err := w.Tr.EnsureTopics(w.Ctx, 1, front); err != nil {
		w.T.Fatal(err)
	}
	a, err := w.Client.NewAgent(runtime.AgentConfig{ID: "planner", Listen: front, Respond: w.replies,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			g, err := fanout.FromHandler(c, w.reg, "review", w.inbox, []byte("draft"), fanout.Quorum(2),
				runtime.WithReplyTopic(w.replies), runtime.WithTimeout(time.Minute))
			if err != nil {
				return err
			}
			return c.Respond([]byte(strings.Repeat("+", len(g.OK))))
		})})
	if err != nil {
		w.T.Fatal(err)
	}
	h := a.Start(w.Ctx)
	if err := h.Ready(w.Ctx); err != nil {
		w.T.Fatal(err)
	}
	defer h.Shutdown(w.Ctx)
	conv := w.Client.IDs().NewID()
	reply, err := w.Client.Request(w.Ctx, runtime.Out{Topic: front, From: "user", Target: "planner", Body: []byte("go")},
		runtime.WithReplyTopic(w.replies), runtime.WithConversation(conv), runtime.WithTimeout(time.Minute))
	if err != nil || string(reply.Body()) != "++" {
		w.T.Fatalf("planner: %v %v, want two reviews", reply, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.seen {
		if string(m.Envelope.Source) != "planner" || m.Provenance.Conversation == conv {
			w.T.Fatalf("a branch came from %s in conversation %s", m.Envelope.Source, m.Provenance.Conversation)
		}
		if s, _ := m.Envelope.Metadata.Get(wire.HeaderParentConversation).AsStr(); s != conv.String() {
			w.T.Fatalf("a branch records parent %q, want the handled conversation %s", s, conv)
		}
	}
}
