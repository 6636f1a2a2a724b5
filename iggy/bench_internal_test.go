package iggy

import (
	"context"
	"fmt"
	"testing"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/wire"
)

// BenchmarkIncoming measures the conversion of one polled batch (500
// messages with provenance headers) into runtime records, per message.
func BenchmarkIncoming(b *testing.B) {
	msgs := make([]iggcon.IggyMessage, 500)
	for i := range msgs {
		prov := wire.Provenance{Conversation: wire.IDFromUint128(7, uint64(i)), Agent: "bench", IdempotencyKey: fmt.Sprintf("k-%d", i)}
		headers, err := prov.Headers()
		if err != nil {
			b.Fatal(err)
		}
		entries, err := headerEntries(headers)
		if err != nil {
			b.Fatal(err)
		}
		m, err := iggcon.NewIggyMessage(make([]byte, 256), iggcon.WithUserHeaders(entries))
		if err != nil {
			b.Fatal(err)
		}
		m.Header.Offset = uint64(i)
		msgs[i] = m
	}
	t := &Transport{cfg: Config{}.resolve()}
	b.ReportAllocs()
	for b.Loop() {
		out, _ := t.incoming(nil, 0, msgs, 0, len(msgs))
		if len(out) != len(msgs) {
			b.Fatal(len(out))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/msg")
}

// BenchmarkBounded measures what running a call under the call timeout
// adds to it.
func BenchmarkBounded(b *testing.B) {
	t := &Transport{cfg: Config{}.resolve()}
	l := &link{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := t.bounded(ctx, l, func(iggyClient) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
