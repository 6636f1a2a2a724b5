package runtime_test

import (
	"testing"

	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/consumebench"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
)

// BenchmarkConsumerThroughput measures messages per second through the
// embedded log: b.N AGDX commands (dedup and fence on) published up front,
// then consumed by a no-op handler, for Serial, for 4 lanes and for
// PerConversation(256) (whose fast path must keep up with Serial's).
func BenchmarkConsumerThroughput(b *testing.B) {
	for _, bc := range []struct {
		name string
		c    runtime.Concurrency
	}{{"serial", runtime.Serial}, {"lanes4", runtime.PerPartition(4)}, {"perconversation256", runtime.PerConversation(256)}} {
		b.Run(bc.name, func(b *testing.B) { benchConsume(b, bc.c, nil) })
	}
}

// benchConsume reports consumebench.Rate: b.N AGDX commands, each with its
// own idempotency key and a fence, through a consumer with a no-op handler
// and dedup (nil: the default in-memory window).
func benchConsume(b *testing.B, conc runtime.Concurrency, dedup dedup.Deduplicator) {
	b.ReportMetric(consumebench.Rate(b, conc, dedup), "msgs/s")
}

// BenchmarkSlowHandler measures a handler that waits 20 ms (a fast model or
// API call) on the embedded log: Serial, PerPartition(4) and
// PerConversation(256) side by side over 512 conversations × 4 records on
// one partition, each with msgs/s and x/ideal (see
// transporttest.SlowHandler).
func BenchmarkSlowHandler(b *testing.B) {
	transporttest.SlowHandler(b, func(*testing.B) runtime.Transport { return embedlog.New("bench", embedlog.Config{}) })
}
