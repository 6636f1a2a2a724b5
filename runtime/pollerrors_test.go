package runtime_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/wire"
)

// TestEmptySuccessfulPollResetsThePollErrorCounter pins a deliberate
// deviation: any successful poll, even an empty one, resets the count of
// consecutive poll failures (the reference resets it only when a message
// arrives). A broker that fails every other poll therefore never stops an
// idle consumer, which carries on (backing off after each failure) and
// handles the next message; under the reference's rule occasional
// failures would add up on an idle topic until the consumer stopped.
func TestEmptySuccessfulPollResetsThePollErrorCounter(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	tr := transporttest.NewFaulty(log)
	var mu sync.Mutex
	polls, failures := 0, 0
	tr.FailPoll(func() error {
		mu.Lock()
		defer mu.Unlock()
		polls++
		if polls%2 == 0 {
			return nil
		}
		failures++
		return errors.New("flaky broker")
	})
	got := make(chan string, 1)
	r := start(t, tr, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			got <- string(c.Message().Body())
			return nil
		}),
	})
	// Well past ten failures, none of them consecutive, on an empty topic.
	transporttest.Eventually(t, waitLimit, "a dozen failed polls", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return failures >= 12
	})
	select {
	case err := <-r.done:
		t.Fatalf("the consumer stopped: %v", err)
	default:
	}
	plain(t, log, wire.Provenance{Conversation: conv()}, "still here")
	if b := recv(t, got, "message after the flaky polls"); b != "still here" {
		t.Fatal(b)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}
