package runtime_test

import (
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TestHardStopCommitsTheRecordsHandledBeforeIt: a hard stop in the middle
// of a batch still commits what was handled earlier in it, and nothing of
// the record cut off.
func TestHardStopCommitsTheRecordsHandledBeforeIt(t *testing.T) {
	for _, conc := range []runtime.Concurrency{runtime.Serial, runtime.PerPartition(2), runtime.PerConversation(2)} {
		t.Run(conc.String(), func(t *testing.T) {
			log := newLog(t, 1, clock.System{})
			c := conv()
			plain(t, log, wire.Provenance{Conversation: c}, "m0")
			m1 := plain(t, log, wire.Provenance{Conversation: c}, "m1")
			plain(t, log, wire.Provenance{Conversation: c}, "cut off")
			started := make(chan struct{})
			consumer, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
				Topic: topic,
				Group: agent,
				Handler: handlerFunc(func(ctx *runtime.Ctx) error {
					if string(ctx.Message().Body()) == "cut off" {
						close(started)
						<-ctx.Done()
						return ctx.Err()
					}
					return nil
				}),
				Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
				Tuning: runtime.Tuning{
					Concurrency: conc,
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			runThenHardStop(t, consumer, started, "the last handler")
			if off, ok := stored(t, log, m1.Partition); !ok || off != m1.Offset {
				t.Fatalf("stored %d (%v), want m1's offset %d", off, ok, m1.Offset)
			}
		})
	}
}
