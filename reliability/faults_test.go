package reliability_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/reliability"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
)

// Fault injection over the in-process Iggy-protocol test server, with the
// consumer in this process on the Iggy transport. Each scenario checks that
// nothing is lost (rig.verify), that nothing panics, that the fault shows
// as a clear error or log line, and that the consumer resumes once the fault
// clears: by itself where the runtime rides over the fault (a dropped
// connection, a transient status, a hung server), after a restart of the
// agent where it stops by design (a failed dead-letter publish, a permanent
// commit failure, the shutdown grace running out).

// TestFaultConnectionDroppedMidPoll drops every connection while the
// consumer's poll is on the wire: the poll fails as a lost connection, the
// consumer backs off, the transport reconnects and rejoins the group, and
// the same agent handles what is published afterwards.
func TestFaultConnectionDroppedMidPoll(t *testing.T) {
	variants(t, func(t *testing.T, c runtime.Concurrency, name string) {
		r := newRig(t, rigOptions{})
		r.publish(normal(20)...)
		h := r.start(r.agentConfig(c, nil))
		r.awaitEffects(20)

		// Only polls hang, so the consumer has committed what it handled
		// before its next poll is held.
		r.srv.Hang(iggytest.CmdPoll)
		if err := r.srv.WaitHeld(r.ctx, 1); err != nil {
			t.Fatal(err)
		}
		r.srv.DropConnections()
		r.srv.Unhang()
		r.logs.waitFor(t, "poll failed, backing off")
		r.logs.waitFor(t, "iggy: connection lost")
		r.logs.waitFor(t, `msg="iggy: reconnected" session="subscription `)

		r.publish(normal(20)...)
		r.awaitEffects(40)
		r.running(h)
		r.shutdown(h)
		r.verify("faults", name)
	})
}

// TestFaultConnectionDroppedMidCommit drops every connection while an
// offset store is on the wire: the store never happened, the consumer
// retries it once the transport has reconnected and rejoined, and carries
// on; every effect is applied once.
func TestFaultConnectionDroppedMidCommit(t *testing.T) {
	variants(t, func(t *testing.T, c runtime.Concurrency, name string) {
		r := newRig(t, rigOptions{})
		r.publish(normal(30)...)
		r.srv.Hang(iggytest.CmdStoreOffset)
		h := r.start(r.agentConfig(c, nil))
		if err := r.srv.WaitHeld(r.ctx, 1); err != nil {
			t.Fatal(err)
		}
		r.srv.DropConnections()
		r.srv.Unhang()
		r.logs.waitFor(t, "commit failed, retrying")
		r.logs.waitFor(t, `msg="iggy: reconnected" session="subscription `)

		r.awaitEffects(30)
		r.publish(normal(10)...)
		r.awaitEffects(40)
		r.running(h)
		r.shutdown(h)
		r.verify("faults", name)
	})
}

// TestFaultErrorStatusOnDeadLetterSend answers the dead-letter publish
// with error statuses. A transient status the producer's retries outlast
// costs nothing; one they do not, or a permanent one, stops the consumer
// with the poison record uncommitted, and the restart parks it exactly once.
func TestFaultErrorStatusOnDeadLetterSend(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status uint32
		times  int
		stops  bool
	}{
		{"transient_retried", iggytest.StatusError, 2, false},
		{"transient_exhausted", iggytest.StatusError, 4, true},
		{"permanent", iggytest.StatusTooBigMessagePayload, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			variants(t, func(t *testing.T, c runtime.Concurrency, name string) {
				r := newRig(t, rigOptions{partitions: 1})
				r.publish(append(append(normal(5), reliability.Rejected), normal(5)...)...)
				r.srv.FailNext(iggytest.CmdSend, tc.status, tc.times)
				cfg := r.agentConfig(c, nil)
				h := r.start(cfg)
				if tc.stops {
					err := r.stopped(h)
					requireErr(t, err, "dead-letter publish failed")
					r.logs.waitFor(t, "dead-letter publish failed; leaving the source offset uncommitted")
					r.mu.Lock()
					failed := len(r.failures)
					r.mu.Unlock()
					if failed != 1 {
						t.Errorf("sink heard of %d failed publishes, want 1", failed)
					}
					poison := r.published[5]
					if off, ok := r.committed(cfg.ID, 0); ok && off >= uint64(poison.Index) {
						t.Errorf("offset %d committed past the unparked poison record", off)
					}
					pending := r.handledUncommitted(cfg.ID)
					h = r.restart(cfg)
					r.awaitRedelivered(pending)
				} else {
					r.logs.waitFor(t, "publish failed, retrying")
				}
				r.awaitParked(1)
				r.awaitEffects(10)
				r.shutdown(h)
				r.verify("faults", name)
			})
		})
	}
}

// TestFaultErrorStatusOnOffsetStore answers an offset store with an error
// status. A transient one (Iggy's catch-all code 1) is retried and the
// consumer carries on; a permanent one (InvalidOffset) stops it with the
// commit error, and a restart redelivers the uncommitted records, which the
// effect store absorbs as duplicates (lanes still drain and commit what
// they had queued).
func TestFaultErrorStatusOnOffsetStore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status uint32
		stops  bool
	}{
		{"transient", iggytest.StatusError, false},
		{"permanent", iggytest.StatusInvalidOffset, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			variants(t, func(t *testing.T, c runtime.Concurrency, name string) {
				r := newRig(t, rigOptions{})
				r.publish(normal(30)...)
				r.srv.FailNext(iggytest.CmdStoreOffset, tc.status, 1)
				cfg := r.agentConfig(c, nil)
				h := r.start(cfg)
				if tc.stops {
					requireErr(t, r.stopped(h), "commit", "invalid offset")
					// Every mode ends through the one drain: its final flush
					// tries the refused offset once more, so what was handled
					// may all be committed; whatever is not is redelivered.
					pending := r.handledUncommitted(cfg.ID)
					h = r.restart(cfg)
					r.awaitRedelivered(pending)
				} else {
					r.logs.waitFor(t, "commit failed, retrying")
				}
				r.awaitEffects(30)
				r.shutdown(h)
				r.verify("faults", name)
			})
		})
	}
}

// TestFaultHungServer makes the server stop answering while the consumer
// polls: the transport's call timeout turns the hang into an error, the
// consumer backs off without losing its place, and once the server answers
// again it resumes by itself (no restart) and handles what follows.
func TestFaultHungServer(t *testing.T) {
	variants(t, func(t *testing.T, c runtime.Concurrency, name string) {
		r := newRig(t, rigOptions{transport: iggy.Config{CallTimeout: 250 * time.Millisecond}})
		r.publish(normal(10)...)
		cfg := r.agentConfig(c, nil)
		h := r.start(cfg)
		r.awaitEffects(10)

		r.srv.Hang(0)
		if err := r.srv.WaitHeld(r.ctx, 1); err != nil {
			t.Fatal(err)
		}
		// Whatever the hang caught (a poll, or the commit of the last
		// batch), the call times out and the consumer backs off.
		r.logs.waitFor(t, "iggy: call timed out")
		r.logs.waitFor(t, "failed, ")
		r.srv.Unhang()

		r.publish(normal(10)...)
		r.awaitEffects(20)
		r.running(h)
		r.shutdown(h)
		r.verify("faults", name)
	})
}

// TestFaultMissingDeadLetterTopic runs an agent whose dead-letter topic does
// not exist: the first poison message stops it with an error naming the
// topic, its offset uncommitted; once the topic exists a restart parks it
// exactly once.
func TestFaultMissingDeadLetterTopic(t *testing.T) {
	variants(t, func(t *testing.T, c runtime.Concurrency, name string) {
		r := newRig(t, rigOptions{partitions: 1, noDLQ: true})
		r.publish(append(append(normal(5), reliability.Rejected), normal(5)...)...)
		cfg := r.agentConfig(c, nil)
		h := r.start(cfg)
		err := r.stopped(h)
		requireErr(t, err, "dead-letter publish failed", `topic "`+r.dlq+`" does not exist`)
		r.logs.waitFor(t, "dead-letter publish failed; leaving the source offset uncommitted")

		if off, ok := r.committed(cfg.ID, 0); ok && off >= 5 {
			t.Errorf("offset %d committed past the unparked poison record", off)
		}
		if err := r.tr.EnsureTopics(r.ctx, 1, r.dlq); err != nil {
			t.Fatal(err)
		}
		pending := r.handledUncommitted(cfg.ID)
		h = r.restart(cfg)
		r.awaitRedelivered(pending)
		r.awaitParked(1)
		r.awaitEffects(10)
		r.shutdown(h)
		r.verify("faults", name)
	})
}

// TestFaultSlowHandlerDuringShutdown stops an agent while a handler is
// slow. Released within the grace, the drain finishes it and commits; past
// the grace, Shutdown returns CodeTimeout without committing and a restart
// redelivers the unfinished message, which is then handled exactly once.
func TestFaultSlowHandlerDuringShutdown(t *testing.T) {
	const grace = time.Minute
	for _, within := range []bool{true, false} {
		name := "past_grace"
		if within {
			name = "within_grace"
		}
		t.Run(name, func(t *testing.T) {
			variants(t, func(t *testing.T, c runtime.Concurrency, name string) {
				r := newRig(t, rigOptions{partitions: 1})
				cmds := r.publish(normal(3)...)
				slow := cmds[1].Key
				clock := lasertest.NewManualClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
				started, release := make(chan struct{}), make(chan struct{})
				var blocking atomic.Bool
				blocking.Store(true)
				cfg := r.agentConfig(c, func(next runtime.Handler) runtime.Handler {
					return runtime.HandlerFunc(func(hc *runtime.Ctx) error {
						if blocking.Load() && hc.Message().Provenance.IdempotencyKey == slow {
							close(started)
							select {
							case <-release:
							case <-hc.Done():
								return hc.Err()
							}
						}
						return next.Handle(hc)
					})
				})
				r.clock = clock
				cfg.Tuning.ShutdownGrace = grace
				h := r.start(cfg)
				select {
				case <-started:
				case <-time.After(waitLimit):
					t.Fatal("the slow handler never started")
				}
				result := make(chan error, 1)
				go func() { result <- h.Shutdown(context.Background()) }()
				// The grace timer is armed once the stop was seen.
				ctx, cancel := context.WithTimeout(r.ctx, waitLimit)
				defer cancel()
				if err := clock.BlockUntil(ctx, 1); err != nil {
					t.Fatal(err)
				}
				if within {
					close(release)
				} else {
					clock.Advance(grace + time.Second)
				}
				var err error
				select {
				case err = <-result:
				case <-time.After(waitLimit):
					t.Fatal("Shutdown did not return")
				}
				if within {
					if err != nil {
						t.Fatalf("Shutdown within the grace = %v", err)
					}
					if off, ok := r.committed(cfg.ID, 0); !ok || off < 1 {
						t.Errorf("committed offset %d (%v) after the drain, want at least 1 (the slow message)", off, ok)
					}
				} else {
					if runtime.CodeOf(err) != runtime.CodeTimeout {
						t.Fatalf("Shutdown past the grace = %v, want CodeTimeout", err)
					}
					if off, ok := r.committed(cfg.ID, 0); ok && off >= 1 {
						t.Errorf("committed offset %d past the unfinished slow message", off)
					}
					if r.hasEffect(slow) {
						t.Error("the abandoned slow handler applied its effect")
					}
				}
				pending := r.handledUncommitted(cfg.ID)
				blocking.Store(false)
				h = r.restart(cfg)
				r.awaitRedelivered(pending)
				r.awaitEffects(3)
				r.shutdown(h)
				r.verify("faults", name)
			})
		})
	}
}

// TestFaultRunAgainAfterDeadLetterFailure is the dead-letter failure of
// TestFaultErrorStatusOnDeadLetterSend with the recovery a supervisor loop
// does: Run the same Consumer again. The poison record must still be parked
// exactly once, not dropped as a duplicate of its own first pass.
func TestFaultRunAgainAfterDeadLetterFailure(t *testing.T) {
	variants(t, func(t *testing.T, c runtime.Concurrency, name string) {
		r := newRig(t, rigOptions{partitions: 1})
		r.publish(append(append(normal(3), reliability.Rejected), normal(3)...)...)
		r.srv.FailNext(iggytest.CmdSend, iggytest.StatusTooBigMessagePayload, 1)
		a := r.agentConfig(c, nil)
		consumer, err := runtime.NewConsumer(r.tr, runtime.ConsumerConfig{
			Topic: r.topic, Group: a.ID, Agent: a.ID, Handler: a.Handler,
			Client: runtime.NewClient(r.tr, runtime.ClientConfig{Logger: r.logs.logger()}),
			Tuning: a.Tuning,
		})
		if err != nil {
			t.Fatal(err)
		}
		requireErr(t, consumer.Run(r.ctx, nil, nil), "dead-letter publish failed")

		r.restarts++
		stop := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- consumer.Run(r.ctx, nil, stop) }()
		r.awaitParked(1)
		r.awaitEffects(6)
		close(stop)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("second Run: %v", err)
			}
		case <-time.After(waitLimit):
			t.Fatal("second Run did not stop")
		}
		r.verify("faults", name)
	})
}
