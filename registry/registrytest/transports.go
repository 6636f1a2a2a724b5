package registrytest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
)

// The three transports every coordination suite runs over.

// EmbeddedLog returns a fresh embedded log.
func EmbeddedLog(*testing.T) runtime.Transport { return embedlog.New("laser", embedlog.Config{}) }

// TestServer starts an in-process Iggy test server and returns a maker of
// transports dialed to it on stream.
func TestServer(t *testing.T, stream string) func(*testing.T) runtime.Transport {
	s := iggytest.Start(t, iggytest.Config{})
	return func(t *testing.T) runtime.Transport { return Dial(t, "iggy://iggy:iggy@"+s.Addr()+"/"+stream) }
}

// RealServer returns a maker of transports dialed to the Iggy server named
// by LASER_IGGY_ADDR (for example iggy://iggy:iggy@127.0.0.1:8090/laser_test),
// skipping t when it is unset.
func RealServer(t *testing.T) func(*testing.T) runtime.Transport {
	addr := os.Getenv("LASER_IGGY_ADDR")
	if addr == "" {
		t.Skip("LASER_IGGY_ADDR is not set; set it to iggy://user:pass@host:port/stream to run against a real Iggy 0.8 server")
	}
	return func(t *testing.T) runtime.Transport { return Dial(t, addr) }
}

// Dial connects to conn, closing the transport when t ends.
func Dial(t *testing.T, conn string) runtime.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, conn, iggy.Config{})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}
