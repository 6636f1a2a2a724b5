package conversation_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// BenchmarkAssembleWindow assembles a full 10,000-record window on the
// embedded log: every record belongs to the conversation (all), or one in
// ten does and the rest are other conversations sharing the partition
// (tenth). It reports records read per second.
func BenchmarkAssembleWindow(b *testing.B) {
	for _, share := range []struct {
		name  string
		every int
	}{{"all", 1}, {"tenth", 10}} {
		b.Run(share.name, func(b *testing.B) {
			ctx := context.Background()
			log := embedlog.New("bench", embedlog.Config{})
			if err := log.EnsureTopics(ctx, 1, "turns"); err != nil {
				b.Fatal(err)
			}
			conv := wire.IDFromUint128(1, 1)
			recs := make([]runtime.Outgoing, 0, conversation.Window)
			for i := range conversation.Window {
				c := conv
				if i%share.every != 0 {
					c = wire.IDFromUint128(2, uint64(i))
				}
				prov := wire.Provenance{Conversation: c, Agent: "user"}
				headers, _ := prov.Headers()
				recs = append(recs, runtime.Outgoing{Key: "one", Headers: headers, Payload: fmt.Appendf(nil, "turn %d: a sentence or two of chat", i)})
			}
			if _, err := log.Publish(ctx, "turns", recs...); err != nil {
				b.Fatal(err)
			}
			opts := conversation.Options{Topics: []string{"turns"}, Policy: conversation.LastN(math.MaxInt)}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				h, err := conversation.Assemble(ctx, log, conv, opts)
				if err != nil || len(h) != conversation.Window/share.every {
					b.Fatalf("%d records, %v", len(h), err)
				}
			}
			b.ReportMetric(float64(conversation.Window)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
