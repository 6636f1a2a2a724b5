package transporttest

import (
	"testing"
	"time"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// quietWindow is how long a scenario watches for something that must not
// happen (another member handling a record whose handler still runs).
const quietWindow = 300 * time.Millisecond

// scenarioGraceTimeout runs a consumer into an expired shutdown grace with
// a handler that ignores its cancellation, in the middle of a batch. What
// was handled before is committed when Run gives up; the member keeps its
// partition while the handler runs, so a replacement handles nothing
// meanwhile; once the handler returns, its record is committed too and the
// replacement takes over with the rest.
func scenarioGraceTimeout(conc runtime.Concurrency) func(*testing.T, runtime.Transport) {
	return func(t *testing.T, tr runtime.Transport) {
		w := newWorld(t, tr, 1)
		c := w.conv()
		w.send(wire.Provenance{Conversation: c}, "m0")
		m1 := w.send(wire.Provenance{Conversation: c}, "m1")
		slow := w.send(wire.Provenance{Conversation: c}, "slow")
		w.send(wire.Provenance{Conversation: c}, "m3")

		started, release := make(chan struct{}), make(chan struct{})
		first := make(chan string, 8)
		k := w.start(tr, func(cfg *runtime.ConsumerConfig) {
			cfg.Concurrency = conc
			cfg.ShutdownGrace = 50 * time.Millisecond
			cfg.Handler = runtime.HandlerFunc(func(ctx *runtime.Ctx) error {
				body := string(ctx.Message().Body())
				if body == "slow" {
					close(started)
					<-release // deaf to the cancellation
				}
				first <- body
				return nil
			})
		})
		select {
		case <-started:
		case <-w.ctx.Done():
			t.Fatal("the slow handler never started")
		}
		for _, want := range []string{"m0", "m1"} {
			if got := <-first; got != want {
				t.Fatalf("handled %q, want %q", got, want)
			}
		}
		if err := w.shutdown(k); runtime.CodeOf(err) != runtime.CodeTimeout {
			t.Fatalf("shutdown = %v, want CodeTimeout", err)
		}
		if got := w.stored(); got[m1.Partition] != m1.Offset {
			t.Fatalf("stored %v after the grace ran out, want m1's offset %d: records handled before the timeout must be committed", got, m1.Offset)
		}

		// A replacement in the same group: the slow handler still runs, so
		// the partition must not be handed to it.
		second := make(chan string, 8)
		k2 := w.start(tr, func(cfg *runtime.ConsumerConfig) {
			cfg.Concurrency = conc
			cfg.Handler = runtime.HandlerFunc(func(ctx *runtime.Ctx) error {
				second <- string(ctx.Message().Body())
				return nil
			})
		})
		select {
		case b := <-second:
			t.Fatalf("the replacement handled %q while the first member's handler still ran", b)
		case <-time.After(quietWindow):
		}
		close(release)
		if got := <-first; got != "slow" {
			t.Fatalf("the first member finished %q, want slow", got)
		}
		select {
		case b := <-second:
			if b != "m3" {
				t.Fatalf("the replacement handled %q, want m3 (slow was handled and committed)", b)
			}
		case <-w.ctx.Done():
			t.Fatal("the replacement never took over")
		}
		if err := w.shutdown(k2); err != nil {
			t.Fatal(err)
		}
		if got := w.stored(); got[slow.Partition] != slow.Offset+1 {
			t.Fatalf("stored %v, want m3's offset %d", got, slow.Offset+1)
		}
		select {
		case b := <-first:
			t.Fatalf("the first member handled %q after it gave up", b)
		case b := <-second:
			t.Fatalf("the replacement handled %q again", b)
		default:
		}
	}
}
