package iggy_test

import (
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
)

func dialTransport(t *testing.T, connString string, opts ...iggy.Option) *iggy.Transport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, err := iggy.Dial(ctx, connString, opts...)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

func TestConformanceOverTestServer(t *testing.T) {
	s := iggytest.Start(t)
	transporttest.Run(t, func(t *testing.T) runtime.Transport {
		return dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test")
	})
}

// TestConformanceOverRealServer runs the suite against the server named by
// LASER_IGGY_ADDR, for example iggy://iggy:iggy@127.0.0.1:8090/laser_test.
// Every run uses fresh topic and group names, so the stream may be reused.
func TestConformanceOverRealServer(t *testing.T) {
	addr := featuretest.RealServerAddr(t)
	transporttest.Run(t, func(t *testing.T) runtime.Transport {
		return dialTransport(t, addr)
	})
}

func TestReliableConsumerScenariosOverTestServer(t *testing.T) {
	s := iggytest.Start(t)
	transporttest.RunConsumer(t, func(t *testing.T) runtime.Transport {
		return dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test")
	})
}

func TestReliableConsumerScenariosOverRealServer(t *testing.T) {
	addr := featuretest.RealServerAddr(t)
	transporttest.RunConsumer(t, func(t *testing.T) runtime.Transport { return dialTransport(t, addr) })
}

func TestStreamScenariosOverTestServer(t *testing.T) {
	s := iggytest.Start(t)
	transporttest.RunStream(t, func(t *testing.T) runtime.Transport {
		return dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test")
	})
}

func TestStreamScenariosOverRealServer(t *testing.T) {
	addr := featuretest.RealServerAddr(t)
	transporttest.RunStream(t, func(t *testing.T) runtime.Transport { return dialTransport(t, addr) })
}
