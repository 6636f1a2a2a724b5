package iggy_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
)

// realServerEnv names the environment variable holding the connection string
// of a real Iggy 0.8 server for the conformance suite.
const realServerEnv = "LASER_IGGY_ADDR"

func dialTransport(t *testing.T, connString string, cfg iggy.Config) *iggy.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, connString, cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

func TestConformanceOverTestServer(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	transporttest.Run(t, func(t *testing.T) runtime.Transport {
		return dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test", iggy.Config{})
	})
}

// TestConformanceOverRealServer runs the suite against the server named by
// LASER_IGGY_ADDR, for example iggy://iggy:iggy@127.0.0.1:8090/laser_test.
// Every run uses fresh topic and group names, so the stream may be reused.
func TestConformanceOverRealServer(t *testing.T) {
	addr := os.Getenv(realServerEnv)
	if addr == "" {
		t.Skip("LASER_IGGY_ADDR is not set; set it to iggy://user:pass@host:port/stream to run against a real Iggy 0.8 server")
	}
	transporttest.Run(t, func(t *testing.T) runtime.Transport {
		return dialTransport(t, addr, iggy.Config{})
	})
}

func TestReliableConsumerScenariosOverTestServer(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	transporttest.RunConsumer(t, func(t *testing.T) runtime.Transport {
		return dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test", iggy.Config{})
	})
}

func TestReliableConsumerScenariosOverRealServer(t *testing.T) {
	addr := os.Getenv(realServerEnv)
	if addr == "" {
		t.Skip("LASER_IGGY_ADDR is not set; set it to iggy://user:pass@host:port/stream to run against a real Iggy 0.8 server")
	}
	transporttest.RunConsumer(t, func(t *testing.T) runtime.Transport { return dialTransport(t, addr, iggy.Config{}) })
}

func TestStreamScenariosOverTestServer(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	transporttest.RunStream(t, func(t *testing.T) runtime.Transport {
		return dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test", iggy.Config{})
	})
}

func TestStreamScenariosOverRealServer(t *testing.T) {
	addr := os.Getenv(realServerEnv)
	if addr == "" {
		t.Skip("LASER_IGGY_ADDR is not set; set it to iggy://user:pass@host:port/stream to run against a real Iggy 0.8 server")
	}
	transporttest.RunStream(t, func(t *testing.T) runtime.Transport { return dialTransport(t, addr, iggy.Config{}) })
}
