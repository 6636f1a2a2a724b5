package runtime_test

import (
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime/transporttest"
)

// BenchmarkStream streams 100 chunks of 32 bytes per iteration over the
// embedded log (chunks/s, time to first chunk).
func BenchmarkStream(b *testing.B) {
	transporttest.BenchStream(b, embedlog.New("laser", embedlog.Config{}), 100, 32)
}
