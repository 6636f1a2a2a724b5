package iggy_test

import (
	"context"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime/transporttest"
)

// publishBatch is how many records each publish of BenchmarkPublish sends.
const publishBatch = 100

// BenchmarkPublish sends the same batches of plain 256-byte messages with
// provenance headers three ways per iteration, interleaved: the bare SDK's
// SendMessages (messages built from the headers each time, as a caller
// would), the transport's Append (no positions) and its Publish (positions
// found by reading the partition back). It reports each one's rate and its
// share of the SDK's (append/sdk, publish/sdk). Like BenchmarkPollAndStore
// it runs against LASER_IGGY_ADDR when set.
func BenchmarkPublish(b *testing.B) {
	rig := newBenchRig(b, "pub")
	ctx := context.Background()
	tr, c, stream, topic, target := rig.tr, rig.sdk, rig.stream, rig.topic, rig.target
	recs := benchRecords(b, 0, publishBatch)
	b.Logf("batches of %d messages of %d bytes on the %s", publishBatch, benchPayload, target.label())
	sdkSend := func() {
		msgs := make([]iggcon.IggyMessage, len(recs))
		for i, r := range recs {
			entries := make([]iggcon.HeaderEntry, len(r.Headers))
			for j, h := range r.Headers {
				entries[j] = iggcon.HeaderEntry{
					Key:   iggcon.HeaderKey{Kind: iggcon.String, Value: []byte(h.Key)},
					Value: iggcon.HeaderValue{Kind: iggcon.HeaderKind(h.Value.Kind), Value: h.Value.Data},
				}
			}
			m, err := iggcon.NewIggyMessage(r.Payload, iggcon.WithUserHeaders(entries))
			if err != nil {
				b.Fatal(err)
			}
			msgs[i] = m
		}
		if err := c.SendMessages(stream, topic, iggcon.PartitionId(0), msgs); err != nil {
			b.Fatal(err)
		}
	}
	var sdkTime, appendTime, publishTime time.Duration
	rounds := 0
	timed := func(total *time.Duration, fn func()) {
		start := time.Now()
		fn()
		*total += time.Since(start)
	}
	for b.Loop() {
		rounds++
		timed(&sdkTime, sdkSend)
		timed(&appendTime, func() {
			if err := tr.Append(ctx, "pub", recs...); err != nil {
				b.Fatal(err)
			}
		})
		timed(&publishTime, func() {
			if _, err := tr.Publish(ctx, "pub", recs...); err != nil {
				b.Fatal(err)
			}
		})
	}
	rate := func(d time.Duration) float64 { return float64(publishBatch*rounds) / d.Seconds() }
	b.ReportMetric(rate(sdkTime), "sdk-msgs/s")
	b.ReportMetric(rate(appendTime), "append-msgs/s")
	b.ReportMetric(rate(publishTime), "publish-msgs/s")
	b.ReportMetric(rate(appendTime)/rate(sdkTime), "append/sdk")
	b.ReportMetric(rate(publishTime)/rate(sdkTime), "publish/sdk")
}

// BenchmarkLatency times publish-to-handler delivery to an idle consumer
// (see transporttest.Latency), against LASER_IGGY_ADDR when set. Publisher
// and consumer have transports (connections) of their own, as two
// processes would.
func BenchmarkLatency(b *testing.B) {
	target := newBenchTarget(b)
	dial := func() *iggy.Transport {
		tr, err := iggy.Dial(context.Background(), target.conn, iggy.Config{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = tr.Close() })
		return tr
	}
	b.Logf("on the %s", target.label())
	transporttest.Latency(b, dial(), dial())
}
