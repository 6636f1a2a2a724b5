package conversation_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lasergo/laser/conversation/conversationtest"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/runtime"
)

func TestRulesOverTheEmbeddedLog(t *testing.T) {
	conversationtest.Run(t, func(t *testing.T) runtime.Transport { return embedlog.New("laser", embedlog.Config{}) })
}

func TestRulesOverTheTestServer(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	conversationtest.Run(t, func(t *testing.T) runtime.Transport {
		return dial(t, "iggy://iggy:iggy@"+s.Addr()+"/conversation_test")
	})
}

// TestRulesOverARealServer runs the rules against the Iggy server named by
// LASER_IGGY_ADDR, for example iggy://iggy:iggy@127.0.0.1:8090/laser_test.
func TestRulesOverARealServer(t *testing.T) {
	addr := os.Getenv("LASER_IGGY_ADDR")
	if addr == "" {
		t.Skip("LASER_IGGY_ADDR is not set; set it to iggy://user:pass@host:port/stream to run against a real Iggy 0.8 server")
	}
	conversationtest.Run(t, func(t *testing.T) runtime.Transport { return dial(t, addr) })
}

func dial(t *testing.T, conn string) runtime.Transport {
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
