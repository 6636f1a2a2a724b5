package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

func TestARequestNobodyWaitsForAnyMoreIsParkedByAnAgentStartedLater(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := embedlog.New("laser", embedlog.Config{Clock: clock})
	c := newClient(t, log, clock, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Request(t.Context(), runtime.Out{From: "caller", Target: "late", Body: []byte("q")}, runtime.WithTimeout(time.Second))
		errc <- err
	}()
	advanceWhenTimer(t, clock, time.Second)
	if err := recv(t, errc, "request result"); runtime.CodeOf(err) != runtime.CodeTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	clock.Advance(time.Millisecond)

	sink, dls := deadLetters()
	runAgent(t, c, runtime.AgentConfig{ID: "late", Respond: runtime.TopicResponses,
		Tuning: runtime.Tuning{DeadLetterSink: sink},
		Handler: handlerFunc(func(*runtime.Ctx) error {
			t.Error("the agent acted on a request its caller gave up on")
			return nil
		})})
	if dl := recv(t, dls, "dead letter"); dl.Capsule.Reason != wire.ReasonDeadlineExceeded {
		t.Fatalf("capsule reason %s, want deadline exceeded", dl.Capsule.Reason)
	}
}

// deadlineSeen runs an agent that answers with nothing and reports the
// deadline of each request it handles.
func deadlineSeen(t *testing.T, c *runtime.Client) <-chan time.Time {
	t.Helper()
	seen := make(chan time.Time, 4)
	runAgent(t, c, runtime.AgentConfig{ID: "clerk", Respond: runtime.TopicResponses,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			var d time.Time
			if us := ctx.Message().Envelope.DeadlineMicros; us != nil {
				d = time.UnixMicro(int64(*us))
			}
			seen <- d
			return ctx.Respond([]byte("ok"))
		})})
	return seen
}

func TestARequestCarriesTheEndOfItsWaitAsItsDeadline(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := embedlog.New("laser", embedlog.Config{Clock: clock})
	c := newClient(t, log, clock, nil)
	seen := deadlineSeen(t, c)
	cmd := runtime.Out{From: "caller", Target: "clerk", Body: []byte("q")}
	if _, err := c.Request(t.Context(), cmd, runtime.WithTimeout(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if d := recv(t, seen, "deadline"); !d.Equal(epoch.Add(time.Minute)) {
		t.Fatalf("WithTimeout(1m): deadline %v, want %v", d, epoch.Add(time.Minute))
	}
	if _, err := c.Request(t.Context(), cmd); err != nil {
		t.Fatal(err)
	}
	if d := recv(t, seen, "deadline"); !d.Equal(epoch.Add(runtime.DefaultRequestTimeout)) {
		t.Fatalf("default timeout: deadline %v, want %v", d, epoch.Add(runtime.DefaultRequestTimeout))
	}
	explicit := epoch.Add(time.Hour)
	if _, err := c.Request(t.Context(), cmd, runtime.WithDeadline(explicit)); err != nil {
		t.Fatal(err)
	}
	if d := recv(t, seen, "deadline"); !d.Equal(explicit) {
		t.Fatalf("WithDeadline: deadline %v, want it as given, %v", d, explicit)
	}
}

func TestARequestUnderAnEarlierContextDeadlineCarriesThatDeadline(t *testing.T) {
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, nil)
	seen := deadlineSeen(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	end, _ := ctx.Deadline()
	if _, err := c.Request(ctx, runtime.Out{From: "caller", Target: "clerk", Body: []byte("q")}, runtime.WithTimeout(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The context's deadline, give or take the instant between reading it
	// and stamping it.
	if d := recv(t, seen, "deadline"); d.After(end) || d.Before(end.Add(-time.Second)) {
		t.Fatalf("deadline %v, want the context's %v", d, end)
	}
}
