package runtime_test

import (
	"testing"
	"time"

	"sync/atomic"

	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// A worker back from its retry wait queues for the slot another record
// holds; a graceful stop closes the scheduler meanwhile. The worker that
// holds the slot must hand it over when it exits, so the retried record
// finishes and Run drains cleanly instead of waiting out ShutdownGrace
// and returning Timeout without leaving the group. The test orders its
// steps by the scheduler's own state (SchedulerState).
func TestAGracefulStopHandsTheSlotToAWorkerBackFromItsRetry(t *testing.T) {
	clk := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clk)
	var attempts atomic.Int32
	slowIn, release := make(chan struct{}), make(chan struct{})
	finished := make(chan string, 16)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			b := string(c.Message().Body())
			if b == "flaky" && attempts.Add(1) == 1 {
				return errBoom
			}
			if b == "slow" {
				close(slowIn)
				<-release
			}
			finished <- b
			return nil
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Clock: clk, Logger: quietLogger()}),
		Tuning: runtime.Tuning{
			Concurrency:   runtime.PerConversation(1),
			Retry:         runtime.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Minute},
			ShutdownGrace: time.Hour,
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv()}, "flaky")
	plain(t, log, wire.Provenance{Conversation: conv()}, "slow")
	recv(t, slowIn, "slow, on the slot flaky lent while it waits")
	if err := clk.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute) // flaky's wait ends: it queues for the slot slow holds
	eventually(t, "flaky to queue for the slot", func() bool { n, _ := runtime.SchedulerState(r.c); return n == 1 })
	close(r.stop)
	eventually(t, "the stop to close the scheduler", func() bool { _, closing := runtime.SchedulerState(r.c); return closing })
	close(release)
	if got := recv(t, finished, "slow"); got != "slow" {
		t.Fatalf("finished %q first, want slow", got)
	}
	select {
	case got := <-finished:
		if got != "flaky" {
			t.Fatalf("finished %q, want the retried flaky", got)
		}
	case <-time.After(5 * time.Second):
		clk.Advance(time.Hour) // let the grace run out so Run returns
		t.Fatal("the record back from its retry wait never got a slot after the stop")
	}
	if err := r.wait(t); err != nil {
		t.Fatalf("Run = %v, want a clean drain", err)
	}
}
