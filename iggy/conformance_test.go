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

// framings are the connection-string suffixes that pick each framing the
// test server speaks on its one port: Iggy 0.8's and VSR (Iggy 0.9+).
var framings = []struct{ name, query string }{{"0.8", ""}, {"vsr", "?protocol=vsr"}}

// overTestServer runs suite once per framing over a fresh test server.
func overTestServer(t *testing.T, suite func(*testing.T, func(*testing.T) runtime.Transport)) {
	for _, f := range framings {
		t.Run(f.name, func(t *testing.T) {
			s := iggytest.Start(t, iggytest.Config{})
			suite(t, func(t *testing.T) runtime.Transport {
				return dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/laser_test"+f.query, iggy.Config{})
			})
		})
	}
}

func TestConformanceOverTestServer(t *testing.T) { overTestServer(t, transporttest.Run) }

// TestConformanceOverRealServer runs the suite against the server named by
// LASER_IGGY_ADDR, for example iggy://iggy:iggy@127.0.0.1:8090/laser_test.
// Every run uses fresh topic and group names, so the stream may be reused.
func TestConformanceOverRealServer(t *testing.T) {
	addr := featuretest.RealServerAddr(t)
	transporttest.Run(t, func(t *testing.T) runtime.Transport {
		return dialTransport(t, addr, iggy.Config{})
	})
}

func TestReliableConsumerScenariosOverTestServer(t *testing.T) {
	overTestServer(t, transporttest.RunConsumer)
}

func TestReliableConsumerScenariosOverRealServer(t *testing.T) {
	addr := featuretest.RealServerAddr(t)
	transporttest.RunConsumer(t, func(t *testing.T) runtime.Transport { return dialTransport(t, addr, iggy.Config{}) })
}

func TestStreamScenariosOverTestServer(t *testing.T) { overTestServer(t, transporttest.RunStream) }

func TestStreamScenariosOverRealServer(t *testing.T) {
	addr := featuretest.RealServerAddr(t)
	transporttest.RunStream(t, func(t *testing.T) runtime.Transport { return dialTransport(t, addr, iggy.Config{}) })
}

// TestDeleteStreamRemovesItsRecords: in either framing, a deleted stream
// takes its topics and records with it, deleting a missing stream is no
// error, and EnsureTopics makes the stream afresh.
func TestDeleteStreamRemovesItsRecords(t *testing.T) {
	for _, f := range framings {
		t.Run(f.name, func(t *testing.T) {
			s := iggytest.Start(t, iggytest.Config{})
			tr := dialTransport(t, "iggy://iggy:iggy@"+s.Addr()+"/doomed"+f.query, iggy.Config{})
			ctx := t.Context()
			if err := tr.EnsureTopics(ctx, 1, "items"); err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Publish(ctx, "items", runtime.Outgoing{Payload: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			if err := tr.DeleteStream(ctx); err != nil {
				t.Fatalf("DeleteStream: %v", err)
			}
			if err := tr.DeleteStream(ctx); err != nil {
				t.Fatalf("deleting a missing stream: %v", err)
			}
			if err := tr.EnsureTopics(ctx, 1, "items"); err != nil {
				t.Fatal(err)
			}
			if n, err := tr.NextOffset(ctx, "items", 0); err != nil || n != 0 {
				t.Fatalf("after the deletion the topic holds %d records (%v), want 0", n, err)
			}
		})
	}
}
