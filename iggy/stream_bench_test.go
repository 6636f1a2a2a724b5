package iggy_test

import (
	"context"
	"io"
	"log"
	"testing"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/runtime/transporttest"
)

// BenchmarkStream streams 100 chunks of 32 bytes per iteration through the
// Iggy transport: over the in-process test server, and over the real server
// named by LASER_IGGY_ADDR when set (chunks/s, time to first chunk).
func BenchmarkStream(b *testing.B) {
	log.SetOutput(io.Discard) // the SDK logs every login
	b.Run("TestServer", func(b *testing.B) {
		s, err := iggytest.Listen("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		tr, err := iggy.Dial(context.Background(), "iggy://iggy:iggy@"+s.Addr()+"/bench")
		if err != nil {
			b.Fatal(err)
		}
		defer tr.Close()
		transporttest.BenchStream(b, tr, 100, 32)
	})
	b.Run("RealServer", func(b *testing.B) {
		addr := featuretest.RealServerAddr(b)
		tr, err := iggy.Dial(context.Background(), addr)
		if err != nil {
			b.Fatal(err)
		}
		defer tr.Close()
		transporttest.BenchStream(b, tr, 100, 32)
	})
}
