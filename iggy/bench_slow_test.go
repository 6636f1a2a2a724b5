package iggy_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
)

// BenchmarkSlowHandler is runtime's BenchmarkSlowHandler over Iggy: a
// handler that waits 20 ms, Serial, PerPartition(4) and
// PerConversation(256) side by side (see transporttest.SlowHandler),
// against LASER_IGGY_ADDR when set, else the in-process test server.
func BenchmarkSlowHandler(b *testing.B) {
	target := newBenchTarget(b)
	b.Logf("on the %s", target.label())
	tr, err := iggy.Dial(context.Background(), target.conn, iggy.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = tr.Close() })
	transporttest.SlowHandler(b, func(*testing.B) runtime.Transport { return tr })
}
