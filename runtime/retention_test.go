package runtime_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TestIdleConsumerKeepsNoHandledMessageAlive checks that once a consumer
// has handled its records and waits for more, the messages it decoded can
// be collected: the consumer allocates messages in groups, and a group kept
// by an idle loop would keep them, and what they point at, alive.
func TestIdleConsumerKeepsNoHandledMessageAlive(t *testing.T) {
	for _, conc := range []runtime.Concurrency{runtime.Serial, runtime.PerPartition(2), runtime.PerConversation(2)} {
		t.Run(conc.String(), func(t *testing.T) {
			const n = 5
			log := newLog(t, 2, clock.System{})
			var mu sync.Mutex
			var seen []weak.Pointer[runtime.Message]
			handled := make(chan struct{}, n)
			start(t, log, runtime.ConsumerConfig{
				Agent: agent,
				Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
					mu.Lock()
					seen = append(seen, weak.Make(c.Message()))
					mu.Unlock()
					handled <- struct{}{}
					return nil
				}),
				Tuning: runtime.Tuning{Concurrency: conc},
			})
			client := runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()})
			for i := range n {
				if _, err := client.SendPlain(context.Background(), topic, wire.Provenance{Conversation: conv()}, fmt.Appendf(nil, "m%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			for range n {
				recv(t, handled, "a handled record")
			}
			// The loops drop their groups right after a batch; collect
			// until every message is gone, or give up at the wait limit.
			deadline := time.Now().Add(waitLimit)
			for {
				goruntime.GC()
				mu.Lock()
				alive := 0
				for _, w := range seen {
					if w.Value() != nil {
						alive++
					}
				}
				mu.Unlock()
				if alive == 0 {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d handled messages still reachable from an idle consumer", alive, n)
				}
				goruntime.Gosched()
			}
		})
	}
}
