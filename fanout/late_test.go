package fanout_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/fanout"
	"github.com/lasergo/laser/runtime"
)

// holdUntilStopped lets the requests to agent late finish only once the
// fan-out has stopped waiting (its context is cancelled), returning err in
// place of the reply when err is set: a branch that ends after the gather
// loop broke but before the fan-out returned.
type holdUntilStopped struct {
	runtime.MiddlewareDefaults
	late string
	err  error
}

func (h holdUntilStopped) InterceptRequest(ctx context.Context, msg *runtime.Out, next func(context.Context) (*runtime.Message, error)) (*runtime.Message, error) {
	if msg.Target != h.late {
		return next(ctx)
	}
	m, err := next(context.WithoutCancel(ctx))
	<-ctx.Done()
	if h.err != nil {
		return nil, h.err
	}
	return m, err
}

// lateWorld starts agents answering "<id> ok" and returns a client whose
// requests to hold.late pass through hold, and the commands the agents
// handled.
func lateWorld(t *testing.T, hold holdUntilStopped, agents ...string) (*runtime.Client, <-chan *runtime.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	tr := embedlog.New("fanout_late", embedlog.Config{})
	if err := tr.EnsureTopics(ctx, 1, "inbox", "replies"); err != nil {
		t.Fatal(err)
	}
	workers := runtime.NewClient(tr, runtime.ClientConfig{})
	t.Cleanup(func() { _ = workers.Close() })
	seen := make(chan *runtime.Message, 16)
	for _, id := range agents {
		a, err := workers.NewAgent(runtime.AgentConfig{ID: id, Listen: "inbox", Respond: "replies",
			Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
				seen <- c.Message()
				return c.Respond([]byte(id + " ok"))
			})})
		if err != nil {
			t.Fatal(err)
		}
		h := a.Start(ctx)
		if err := h.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Shutdown(ctx) })
	}
	c := runtime.NewClient(tr, runtime.ClientConfig{Middleware: []runtime.Middleware{hold}})
	t.Cleanup(func() { _ = c.Close() })
	return c, seen
}

func names(rs []fanout.Reply) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Agent)
	}
	slices.Sort(out)
	return out
}

// TestBranchAnsweringAfterTheQuorumIsReportedOK: a branch whose reply lands
// after the quorum was met, while the fan-out stops, is a success, not a
// cancelled straggler.
func TestBranchAnsweringAfterTheQuorumIsReportedOK(t *testing.T) {
	c, _ := lateWorld(t, holdUntilStopped{late: "slow"}, "fast", "slow")
	g, err := fanout.SendTo(context.Background(), c, []string{"fast", "slow"},
		fanout.Request{Topic: "inbox", From: "planner", Body: []byte("d")}, fanout.Quorum(1), runtime.WithReplyTopic("replies"))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(g.OK); !slices.Equal(got, []string{"fast", "slow"}) || len(g.Cancelled) != 0 || len(g.Failures) != 0 {
		t.Fatalf("ok %v, cancelled %v, failures %v: the late reply must be OK", got, g.Cancelled, g.Failures)
	}
}

// TestBranchFailingAfterTheQuorumIsReportedFailed: likewise a late failure
// is a failure, not a cancellation.
func TestBranchFailingAfterTheQuorumIsReportedFailed(t *testing.T) {
	boom := errors.New("late failure")
	c, _ := lateWorld(t, holdUntilStopped{late: "slow", err: boom}, "fast", "slow")
	g, err := fanout.SendTo(context.Background(), c, []string{"fast", "slow"},
		fanout.Request{Topic: "inbox", From: "planner", Body: []byte("d")}, fanout.Quorum(1), runtime.WithReplyTopic("replies"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Failures) != 1 || g.Failures[0].Agent != "slow" || !errors.Is(g.Failures[0].Err, boom) || len(g.Cancelled) != 0 {
		t.Fatalf("failures %v, cancelled %v: the late failure must be a failure", g.Failures, g.Cancelled)
	}
}

// TestBranchCommandsExpireWhenTheWaitEnds: each branch's command carries
// the end of the caller's wait as its deadline, so a target picking it up
// later dead-letters it instead of acting.
func TestBranchCommandsExpireWhenTheWaitEnds(t *testing.T) {
	for name, tc := range map[string]struct {
		ctxWait time.Duration
		policy  fanout.Policy
		want    time.Duration
	}{
		"best effort window": {time.Hour, fanout.BestEffort(time.Minute), time.Minute},
		"caller's context":   {time.Minute, fanout.RequireAll(), time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			c, seen := lateWorld(t, holdUntilStopped{}, "solo")
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctxWait)
			defer cancel()
			start := time.Now()
			g, err := fanout.SendTo(ctx, c, []string{"solo"},
				fanout.Request{Topic: "inbox", From: "planner", Body: []byte("d")}, tc.policy, runtime.WithReplyTopic("replies"))
			if err != nil || len(g.OK) != 1 {
				t.Fatalf("gather %+v: %v", g, err)
			}
			cmd := <-seen
			if cmd.Envelope.DeadlineMicros == nil {
				t.Fatal("the branch command carries no deadline")
			}
			got := time.UnixMicro(int64(*cmd.Envelope.DeadlineMicros)).Sub(start)
			if got < tc.want-10*time.Second || got > tc.want+10*time.Second {
				t.Fatalf("the branch command expires %s after the fan-out started, want about %s", got, tc.want)
			}
		})
	}
}
