package runtime_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TestHandlerKeepsItsMessagesUnchangedAcrossLaterBatches has a handler keep
// every message it receives, its body and its headers, while later batches
// are polled and decoded: what a handler receives is its own, so nothing
// the consumer reads or decodes afterwards may reuse the memory a kept
// message points at (run with the race detector).
func TestHandlerKeepsItsMessagesUnchangedAcrossLaterBatches(t *testing.T) {
	for _, conc := range []runtime.Concurrency{runtime.Serial, runtime.PerPartition(2), runtime.PerConversation(2)} {
		t.Run(conc.String(), func(t *testing.T) {
			const rounds, perRound = 4, 40
			log := newLog(t, 2, clock.System{})
			type kept struct {
				m    *runtime.Message
				body []byte
				key  wire.HeaderValue
			}
			var mu sync.Mutex
			var all []kept
			handled := make(chan struct{}, rounds*perRound)
			start(t, log, runtime.ConsumerConfig{
				Agent: agent,
				Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
					m := c.Message()
					key, _ := m.Headers.Get(wire.HeaderIdempotencyKey)
					mu.Lock()
					all = append(all, kept{m: m, body: m.Body(), key: key})
					mu.Unlock()
					handled <- struct{}{}
					return nil
				}),
				Tuning: runtime.Tuning{Concurrency: conc, PollBatch: 16},
			})
			client := runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()})
			// One round at a time, each handled before the next is sent, so
			// later rounds are polled and decoded while earlier messages are
			// held.
			for r := range rounds {
				for i := range perRound {
					n := r*perRound + i
					prov := wire.Provenance{Conversation: conv(), IdempotencyKey: fmt.Sprintf("key-%d", n)}
					if _, err := client.SendPlain(t.Context(), topic, prov, fmt.Appendf(nil, "body-%d", n)); err != nil {
						t.Fatal(err)
					}
				}
				for range perRound {
					recv(t, handled, "a handled record")
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(all) != rounds*perRound {
				t.Fatalf("handled %d messages, want %d", len(all), rounds*perRound)
			}
			seen := make(map[int]bool, len(all))
			for _, k := range all {
				var n int
				if _, err := fmt.Sscanf(k.m.Provenance.IdempotencyKey, "key-%d", &n); err != nil {
					t.Fatalf("a kept message's key became %q", k.m.Provenance.IdempotencyKey)
				}
				seen[n] = true
				want := fmt.Sprintf("body-%d", n)
				if string(k.body) != want || string(k.m.Body()) != want || string(k.m.Payload) != want {
					t.Errorf("message %d: body %q, payload %q later; it was %q, want %q", n, k.m.Body(), k.m.Payload, k.body, want)
				}
				key, ok := k.m.Headers.Get(wire.HeaderIdempotencyKey)
				if s, _ := key.AsString(); !ok || s != fmt.Sprintf("key-%d", n) {
					t.Errorf("message %d: idempotency header %q later", n, s)
				}
				if s, _ := k.key.AsString(); s != fmt.Sprintf("key-%d", n) {
					t.Errorf("message %d: the header value kept by the handler became %q", n, s)
				}
			}
			if len(seen) != rounds*perRound {
				t.Errorf("%d distinct messages among %d kept: one was overwritten by another", len(seen), len(all))
			}
		})
	}
}
