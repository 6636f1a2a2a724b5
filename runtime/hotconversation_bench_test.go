package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// hotBacklog is how many records of one conversation stand ahead of
// another conversation's record in BenchmarkHotConversation.
const hotBacklog = 100_000

// BenchmarkHotConversation puts 100,000 records of one conversation, the
// first of them slow, ahead of one record of another conversation on one
// partition, under PerConversation(256), and reports how long after Run
// started the other record was handled (other-ms; the goal is 10 ms) and
// how long the hot backlog took to drain once its first record returned
// (hot-ms).
func BenchmarkHotConversation(b *testing.B) {
	ctx := context.Background()
	var otherMS, hotMS float64
	for b.Loop() {
		b.StopTimer()
		log := embedlog.New("bench", embedlog.Config{})
		if err := log.EnsureTopics(ctx, 1, topic); err != nil {
			b.Fatal(err)
		}
		hot, cold := conv(), conv()
		publish := func(c wire.ID, body string, n int) {
			prov := wire.Provenance{Conversation: c}
			h, err := prov.Headers()
			if err != nil {
				b.Fatal(err)
			}
			recs := make([]runtime.Outgoing, 0, 1000)
			for i := 0; i < n; i += len(recs) {
				recs = recs[:0]
				for j := i; j < min(n, i+1000); j++ {
					recs = append(recs, runtime.Outgoing{Key: c.String(), Headers: h, Payload: []byte(body)})
				}
				if _, err := log.Publish(ctx, topic, recs...); err != nil {
					b.Fatal(err)
				}
			}
		}
		publish(hot, "slow", 1)
		publish(hot, "hot", hotBacklog-1)
		publish(cold, "other", 1)

		otherDone := make(chan time.Time, 1)
		slowDone := make(chan time.Time, 1)
		drained := make(chan time.Time, 1)
		left := hotBacklog
		c, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
			Topic: topic, Group: agent,
			Handler: handlerFunc(func(hc *runtime.Ctx) error {
				switch string(hc.Message().Body()) {
				case "other":
					otherDone <- time.Now()
					return nil
				case "slow":
					// The slow record: it runs until the other record was
					// handled, or a second at most (a frozen partition).
					select {
					case at := <-otherDone:
						otherDone <- at
					case <-time.After(time.Second):
					}
					slowDone <- time.Now()
				}
				if left--; left == 0 { // one conversation: one record at a time
					drained <- time.Now()
				}
				return nil
			}),
			Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
			Tuning: runtime.Tuning{Concurrency: runtime.PerConversation(256)},
		})
		if err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		errc := make(chan error, 1)
		b.StartTimer()
		began := time.Now()
		go func() { errc <- c.Run(ctx, nil, stop) }()
		slowAt := <-slowDone
		end := <-drained
		b.StopTimer()
		otherMS += float64((<-otherDone).Sub(began).Microseconds()) / 1000
		hotMS += float64(end.Sub(slowAt).Microseconds()) / 1000
		close(stop)
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(otherMS/float64(b.N), "other-ms")
	b.ReportMetric(hotMS/float64(b.N), "hot-ms")
}
