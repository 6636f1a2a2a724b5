package runtime_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TestANewScheduleKeyOrdersRecordsPerKey runs a key the test defines (the
// payload's prefix, read without decoding, over records of distinct
// conversations) through the one scheduler: the records of a key are
// handled one at a time in log order, different keys at once (the first
// record of every key waits until all four started), and every offset is
// committed.
func TestANewScheduleKeyOrdersRecordsPerKey(t *testing.T) {
	const keys, perKey = 4, 25
	log := newLog(t, 1, clock.System{})
	var mu sync.Mutex
	busy := map[string]bool{}
	got := map[string][]int{}
	var overlap string
	firsts := make(chan struct{}, keys)
	allStarted := make(chan struct{})
	done := make(chan struct{}, keys*perKey)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			var key string
			var i int
			if _, err := fmt.Sscanf(string(c.Message().Body()), "%1s-%d", &key, &i); err != nil {
				return runtime.Reject(err)
			}
			mu.Lock()
			if busy[key] {
				overlap = key
			}
			busy[key] = true
			mu.Unlock()
			if i == 0 {
				firsts <- struct{}{}
				<-allStarted
			}
			mu.Lock()
			busy[key] = false
			got[key] = append(got[key], i)
			mu.Unlock()
			done <- struct{}{}
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.KeyedByPayloadPrefix(runtime.PerConversation(8))},
	})
	var last runtime.Position
	for i := range perKey {
		for k := range keys {
			last = plain(t, log, wire.Provenance{Conversation: conv()}, fmt.Sprintf("%c-%d", 'a'+k, i))
		}
	}
	for range keys {
		recv(t, firsts, "the first record of every key, at once")
	}
	close(allStarted)
	for range keys * perKey {
		recv(t, done, "handled")
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if overlap != "" {
		t.Errorf("two records of key %s were handled at once", overlap)
	}
	for k := range keys {
		key := string(rune('a' + k))
		if len(got[key]) != perKey {
			t.Fatalf("key %s: handled %v", key, got[key])
		}
		for i, n := range got[key] {
			if n != i {
				t.Fatalf("key %s handled out of log order: %v", key, got[key])
			}
		}
	}
	if off, ok := stored(t, log, 0); !ok || off != last.Offset {
		t.Fatalf("stored %d,%v, want %d", off, ok, last.Offset)
	}
}
