package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// TestRunAgainAfterDeadLetterFailureParksThePoison stops a consumer with a
// failed dead-letter publish and runs the same Consumer again: the poison
// record comes back and is parked. Its first pass had already marked its
// idempotency key (or its signed record id), and a window kept across Runs
// dropped the redelivery as a duplicate (or a replay), committing a record
// that was neither handled nor parked.
func TestRunAgainAfterDeadLetterFailureParksThePoison(t *testing.T) {
	for _, signed := range []bool{false, true} {
		name := "idempotency_key"
		if signed {
			name = "signed_record"
		}
		t.Run(name, func(t *testing.T) {
			log := newLog(t, 1, clock.System{})
			faulty := transporttest.NewFaulty(log)
			faulty.FailPublish(func(topic string) error {
				if topic == dlq {
					return errors.New("dead-letter topic unavailable")
				}
				return nil
			})
			sink, dls := deadLetters()
			cfg := runtime.ConsumerConfig{
				Topic:   topic,
				Group:   agent,
				Agent:   agent,
				Handler: handlerFunc(func(*runtime.Ctx) error { return runtime.Reject(fmt.Errorf("poison")) }),
				Client:  runtime.NewClient(faulty, runtime.ClientConfig{Logger: quietLogger()}),
				Tuning: runtime.Tuning{
					DeadLetterSink: sink,
					Retry:          runtime.RetryPolicy{MaxAttempts: 1},
				},
			}
			var pos runtime.Position
			if signed {
				key := newKey(9)
				reg := sign.NewRegistry()
				if err := reg.Enroll(sender, key.Public()); err != nil {
					t.Fatal(err)
				}
				cfg.Verifier = reg
				pos = envelope(t, log, signedCommand(t, key, "poison", wire.ContentJSON), wire.ContentJSON)
			} else {
				pos = plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, IdempotencyKey: "once"}, "poison")
			}
			c, err := runtime.NewConsumer(faulty, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			if err := c.Run(ctx, nil, nil); err == nil {
				t.Fatal("Run survived a failed dead-letter publish")
			}
			if dl := recv(t, dls, "failed dead letter"); dl.PublishErr == nil {
				t.Fatal("the first dead letter was published")
			}

			faulty.FailPublish(nil)
			stop := make(chan struct{})
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx, nil, stop) }()
			dl := recv(t, dls, "dead letter of the second Run")
			close(stop)
			if err := recv(t, done, "second Run"); err != nil {
				t.Fatal(err)
			}
			if dl.PublishErr != nil || dl.Capsule.Source.Offset != pos.Offset {
				t.Fatalf("second Run parked %+v (publish error %v), want the poison at %s", dl.Capsule.Source, dl.PublishErr, pos)
			}
			if off, ok := stored(t, log, pos.Partition); !ok || off != pos.Offset {
				t.Errorf("stored = %d, %v; want %d", off, ok, pos.Offset)
			}
		})
	}
}
