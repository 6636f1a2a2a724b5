package interop

import (
	"log/slog"
	"testing"

	"github.com/lasergo/laser/iggytest"
)

// startInProcess starts the in-process test server, which speaks Iggy 0.8
// and VSR on one port, for the test and returns its address.
func startInProcess(t *testing.T) string {
	t.Helper()
	return iggytest.Start(t, iggytest.Config{}).Addr()
}

// testLogger discards the client's logs: its goroutines may log after the
// test ends, when t no longer takes output.
func testLogger(*testing.T) *slog.Logger { return slog.New(slog.DiscardHandler) }
