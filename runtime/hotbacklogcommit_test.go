package runtime_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// A partition holding only a hot conversation: intake tickets its first
// records and leaves the rest to the key's backlog, which handles them
// without tickets. A clean stop must commit the last record the backlog
// handled, not the last ticketed one.
func TestAHotOnlyPartitionCommitsWhatItsBacklogHandled(t *testing.T) {
	const backlog = 40
	log := newLog(t, 1, clock.System{})
	hot := conv()
	release := make(chan struct{})
	finished := make(chan string, backlog+1)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			b := string(ctx.Message().Body())
			if b == "hot-000" {
				<-release
			}
			finished <- b
			return nil
		}),
		Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(4), MaxQueuedRecords: 8, PollBatch: 16},
	})
	var last runtime.Position
	for i := range backlog {
		last = plain(t, log, wire.Provenance{Conversation: hot}, fmt.Sprintf("hot-%03d", i))
	}
	time.Sleep(200 * time.Millisecond) // intake fills the queue and leaves the rest to the backlog
	close(release)
	for range backlog {
		recv(t, finished, "the hot backlog")
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if off, ok := stored(t, log, 0); !ok || off != last.Offset {
		t.Fatalf("stored %d,%v after handling all %d records, want %d", off, ok, backlog, last.Offset)
	}
}
