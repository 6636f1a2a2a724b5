package featuretest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/realiggy"
	"github.com/lasergo/laser/runtime"
)

// RealServerEnv names the environment variable holding the connection
// string of a real Iggy server, for the tests that run against one.
const RealServerEnv = realiggy.Env

// realServerHint says how to run the skipped tests.
const realServerHint = "set it to iggy://user:pass@host:port/stream (for example iggy://iggy:iggy@127.0.0.1:8090/laser_test) to run against a real Iggy 0.8 server, with ?protocol=vsr for Iggy 0.9+; each test works in a fresh stream named after that one, deleted when it ends"

// RealServerAddr returns a connection string for the Iggy server
// LASER_IGGY_ADDR names, on a stream of tb's own: fresh, named after the
// variable's stream and tb, and deleted with all in it when tb ends
// (realiggy.Stream), so runs never see each other's records. It skips tb,
// with a message saying how to set the variable, when it is unset.
func RealServerAddr(tb testing.TB) string {
	tb.Helper()
	addr := os.Getenv(RealServerEnv)
	if addr == "" {
		tb.Skip(RealServerEnv + " is not set; " + realServerHint)
		return ""
	}
	return realiggy.Stream(tb, addr)
}

// Transport is one log the suites run over: a name for the subtest and a
// maker of fresh transports.
type Transport struct {
	Name string
	New  func(t *testing.T) runtime.Transport
}

// Transports returns the logs laser-go ships: the embedded log, Iggy over
// an in-process test server (on stream), and a real Iggy server when
// LASER_IGGY_ADDR names one, on a fresh stream of t's own (deleted when t
// ends), as the test server is t's own.
func Transports(t *testing.T, stream string) []Transport {
	t.Helper()
	trs := []Transport{
		{Name: "embedlog", New: EmbeddedLog},
		{Name: "iggytest", New: TestServer(t, stream)},
	}
	if addr := os.Getenv(RealServerEnv); addr != "" {
		conn := realiggy.Stream(t, addr)
		trs = append(trs, Transport{Name: "iggy", New: func(t *testing.T) runtime.Transport { return Dial(t, conn) }})
	}
	return trs
}

// EmbeddedLog returns a fresh embedded log.
func EmbeddedLog(*testing.T) runtime.Transport { return embedlog.New("laser", embedlog.Config{}) }

// TestServer starts an in-process Iggy test server and returns a maker of
// transports dialed to it on stream.
func TestServer(t *testing.T, stream string) func(*testing.T) runtime.Transport {
	t.Helper()
	s := iggytest.Start(t, iggytest.Config{})
	return func(t *testing.T) runtime.Transport { return Dial(t, "iggy://iggy:iggy@"+s.Addr()+"/"+stream) }
}

// RealServer returns a maker of transports dialed to the Iggy server named
// by LASER_IGGY_ADDR, all on one fresh stream of t's own (RealServerAddr),
// skipping t when the variable is unset.
func RealServer(t *testing.T) func(*testing.T) runtime.Transport {
	t.Helper()
	addr := RealServerAddr(t)
	return func(t *testing.T) runtime.Transport { return Dial(t, addr) }
}

// dialTimeout bounds a dial, so an unreachable server fails the test
// instead of hanging it.
const dialTimeout = 10 * time.Second

// Dial connects to conn, closing the transport when t ends.
func Dial(t *testing.T, conn string) runtime.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), dialTimeout)
	defer cancel()
	tr, err := iggy.Dial(ctx, conn, iggy.Config{})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}
