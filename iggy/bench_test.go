package iggy_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	iggcon "github.com/apache/iggy/foreign/go/contracts"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/internal/proccpu"
	"github.com/lasergo/laser/runtime"
)

const (
	benchMessages = 50_000
	benchBatch    = 500
	benchPayload  = 256
)

// BenchmarkPollAndStore reads the same pre-published messages several times
// per iteration, each time as a fresh consumer group, interleaved so all of
// them see the same machine load: with a bare SDK loop (group poll with
// "next", then store the last offset), through the transport
// (Subscription.Poll, then Commit), and through the full reliable consumer
// with a no-op handler, Serial and with lanes. It reports the rates and the
// share of the bare loop's throughput the others keep (transport/sdk,
// serial/sdk, lanes/sdk) and the heap each of the first two allocates per
// message (sdk-alloc-B/msg, transport-alloc-B/msg); on a real server, the CPU time the process spent
// per message in each (*-cpu-ns/msg, garbage collection included) and its
// ratio to the bare loop's (*-cpu/sdk-cpu); and,
// when LASER_IGGY_SERVER_PID names the server's process on this machine,
// the server's CPU per message in each (*-server-cpu-ns/msg). Rates are
// steady-state: each loop is timed from the moment it is a member of its
// group (the bare loop reuses a logged-in client, while a subscription
// opens and logs in a connection of its own; consumer-join-ms reports what
// that costs a consumer) to the end of its run, final commit and leave
// included, and each starts from a collected heap. It runs against
// LASER_IGGY_ADDR when set (a fresh stream per run) and the in-process test
// server otherwise; only the real server gives meaningful ratios, the test
// server being far slower than what is measured.
//
// A fifth loop runs the Serial consumer over the same records on the
// embedded log (embedded-serial-msgs/s, embedded-serial-cpu-ns/msg): the
// consumer's cost with no Iggy poll path and no server beside it. The log
// is filled before the loop is timed, and its records are live while the
// loop runs, so that loop collects garbage less often than the others, but
// each collection scans them.
func BenchmarkPollAndStore(b *testing.B) {
	rig := newBenchRig(b, "t")
	ctx := context.Background()
	tr, c, stream, topic, target := rig.tr, rig.sdk, rig.stream, rig.topic, rig.target
	for sent := 0; sent < benchMessages; sent += benchBatch {
		if err := tr.Append(ctx, "t", benchRecords(b, sent, benchBatch)...); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d messages of %d bytes on the %s", benchMessages, benchPayload, target.label())
	if _, ok := serverCPU(); !ok && os.Getenv("LASER_IGGY_SERVER_PID") != "" {
		b.Logf("LASER_IGGY_SERVER_PID is set but its CPU time cannot be read: no *-server-cpu-ns/msg")
	}

	// Per loop kind: wall time from joining to the end, the process's CPU
	// time over the whole loop (join included, which is small), and the
	// server's CPU time from the join to the end.
	type spent struct {
		wall, cpu, server time.Duration
		alloc             uint64 // heap bytes allocated
	}
	var sdkTime, trTime, serialTime, lanesTime, embeddedTime spent
	var joinTime time.Duration
	round := 0
	timed := func(total *spent, fn func() joinMark) {
		// Each loop starts from a collected heap, so none pays for the
		// garbage of the one before it.
		goruntime.GC()
		var mem goruntime.MemStats
		goruntime.ReadMemStats(&mem)
		allocated := mem.TotalAlloc
		start, cpu := time.Now(), proccpu.Used()
		joined := fn()
		total.wall += time.Since(joined.at)
		total.cpu += proccpu.Used() - cpu
		goruntime.ReadMemStats(&mem)
		total.alloc += mem.TotalAlloc - allocated
		// From the join on: a login costs the server a password hash,
		// which the bare loop's reused client does not pay.
		if now, ok := serverCPU(); ok && joined.serverOK {
			total.server += now - joined.server
		}
		if total == &serialTime {
			joinTime += joined.at.Sub(start)
		}
	}
	for b.Loop() {
		round++
		timed(&sdkTime, func() joinMark { return sdkLoop(b, c, target.vsr, stream, topic, fmt.Sprintf("sdk-%d", round)) })
		timed(&trTime, func() joinMark { return transportLoop(b, tr, fmt.Sprintf("tr-%d", round)) })
		timed(&serialTime, func() joinMark { return consumerLoop(b, tr, fmt.Sprintf("serial-%d", round), runtime.Serial) })
		timed(&lanesTime, func() joinMark { return consumerLoop(b, tr, fmt.Sprintf("lanes-%d", round), runtime.PerPartition(4)) })
		// Filled anew each round and dropped after its loop, so the other
		// loops collect garbage on the same small heap as before.
		embedded := embeddedLog(b)
		timed(&embeddedTime, func() joinMark { return consumerLoop(b, embedded, "embedded", runtime.Serial) })
	}
	msgs := float64(benchMessages * round)
	rate := func(s spent) float64 { return msgs / s.wall.Seconds() }
	sdkRate := rate(sdkTime)
	b.ReportMetric(sdkRate, "sdk-msgs/s")
	b.ReportMetric(rate(trTime), "transport-msgs/s")
	b.ReportMetric(rate(serialTime), "serial-msgs/s")
	b.ReportMetric(rate(lanesTime), "lanes-msgs/s")
	b.ReportMetric(rate(trTime)/sdkRate, "transport/sdk")
	b.ReportMetric(rate(serialTime)/sdkRate, "serial/sdk")
	b.ReportMetric(rate(lanesTime)/sdkRate, "lanes/sdk")
	b.ReportMetric(rate(embeddedTime), "embedded-serial-msgs/s")
	// Heap allocated per polled message, join and leave included: the
	// record itself (its runtime.Incoming and its share of the reply) and
	// whatever else the path costs.
	b.ReportMetric(float64(sdkTime.alloc)/msgs, "sdk-alloc-B/msg")
	b.ReportMetric(float64(trTime.alloc)/msgs, "transport-alloc-B/msg")
	// The client's CPU per message: on a machine the server shares, what
	// the consumer adds to the bare loop's CPU is what limits its rate. The
	// in-process test server runs in this process, so its CPU would count.
	if target.real {
		cpuPerMsg := func(s spent) float64 { return float64(s.cpu.Nanoseconds()) / msgs }
		b.ReportMetric(cpuPerMsg(sdkTime), "sdk-cpu-ns/msg")
		b.ReportMetric(cpuPerMsg(trTime), "transport-cpu-ns/msg")
		b.ReportMetric(cpuPerMsg(serialTime), "serial-cpu-ns/msg")
		b.ReportMetric(cpuPerMsg(lanesTime), "lanes-cpu-ns/msg")
		b.ReportMetric(cpuPerMsg(embeddedTime), "embedded-serial-cpu-ns/msg")
		// The goals are ratios of CPU per message to the bare loop's (Serial
		// at most 1.6x, lanes 1.8x), which load moves less than rates.
		b.ReportMetric(cpuPerMsg(serialTime)/cpuPerMsg(sdkTime), "serial-cpu/sdk-cpu")
		b.ReportMetric(cpuPerMsg(lanesTime)/cpuPerMsg(sdkTime), "lanes-cpu/sdk-cpu")
		b.ReportMetric(cpuPerMsg(trTime)/cpuPerMsg(sdkTime), "transport-cpu/sdk-cpu")
	}
	if _, ok := serverCPU(); ok && target.real {
		serverPerMsg := func(s spent) float64 { return float64(s.server.Nanoseconds()) / msgs }
		b.ReportMetric(serverPerMsg(sdkTime), "sdk-server-cpu-ns/msg")
		b.ReportMetric(serverPerMsg(trTime), "transport-server-cpu-ns/msg")
		b.ReportMetric(serverPerMsg(serialTime), "serial-server-cpu-ns/msg")
		b.ReportMetric(serverPerMsg(lanesTime), "lanes-server-cpu-ns/msg")
	}
	b.ReportMetric(float64(joinTime.Milliseconds())/float64(round), "consumer-join-ms")
}

// joinMark is the moment a loop became a member of its group, and the
// server's CPU time then, when serverCPU could tell (serverOK).
type joinMark struct {
	at       time.Time
	server   time.Duration
	serverOK bool
}

func markJoin() joinMark {
	server, ok := serverCPU()
	return joinMark{at: time.Now(), server: server, serverOK: ok}
}

// embeddedLog returns an embedded log holding the benchmark's records on
// one partition of topic "t", as the server holds them.
func embeddedLog(b *testing.B) *embedlog.Log {
	ctx := context.Background()
	log := embedlog.New("bench", embedlog.Config{})
	if err := log.EnsureTopics(ctx, 1, "t"); err != nil {
		b.Fatal(err)
	}
	for sent := 0; sent < benchMessages; sent += benchBatch {
		if _, err := log.Publish(ctx, "t", benchRecords(b, sent, benchBatch)...); err != nil {
			b.Fatal(err)
		}
	}
	return log
}

// consumerLoop runs the full reliable consumer (decode, dedup, dispatch to
// a no-op handler, commit after success) over the same messages, until
// every one was handled and the consumer stopped gracefully (final commit
// and leave included). It returns when the consumer was ready: joining a
// group on Iggy costs the consumer a connection and a login of its own,
// which the bare loop does not pay, and a long-lived consumer pays once.
func consumerLoop(b *testing.B, tr runtime.Transport, group string, conc runtime.Concurrency) (ready joinMark) {
	done := make(chan struct{})
	var n atomic.Int64
	c, err := runtime.NewConsumer(tr, runtime.ConsumerConfig{
		Topic: "t",
		Group: group,
		Agent: "worker",
		Handler: runtime.HandlerFunc(func(*runtime.Ctx) error {
			if n.Add(1) == benchMessages {
				close(done)
			}
			return nil
		}),
		Client: runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Tuning: runtime.Tuning{
			PollBatch:   benchBatch,
			Concurrency: conc,
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() { errc <- c.Run(context.Background(), func() { ready = markJoin() }, stop) }()
	select {
	case <-done:
	case err := <-errc:
		b.Fatalf("consumer stopped: %v", err)
	}
	close(stop)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	return ready
}

// sdkLoop is the bare loop (the SDK's client, or on VSR the transport's VSR
// client alone); it returns when it had joined its group. On VSR it polls
// partition 0 by id: a 0.9 server hands a group member its partitions
// through an assignment the SDK's own loop would sync first.
func sdkLoop(b *testing.B, c iggy.BenchClient, vsr bool, stream, topic iggcon.Identifier, group string) (joined joinMark) {
	var partition *uint32
	if vsr {
		partition = new(uint32)
	}
	if _, err := c.CreateConsumerGroup(stream, topic, group); err != nil {
		b.Fatal(err)
	}
	gid := benchIdent(b, group)
	if err := c.JoinConsumerGroup(stream, topic, gid); err != nil {
		b.Fatal(err)
	}
	consumer := iggcon.NewGroupConsumer(gid)
	joined = markJoin()
	for got := 0; got < benchMessages; {
		pm, err := c.PollMessages(stream, topic, consumer, iggcon.NextPollingStrategy(), benchBatch, false, partition)
		if err != nil {
			b.Fatal(err)
		}
		if len(pm.Messages) == 0 {
			b.Fatalf("bare loop starved after %d messages", got)
		}
		got += len(pm.Messages)
		last := pm.Messages[len(pm.Messages)-1].Header.Offset
		if err := c.StoreConsumerOffset(consumer, stream, topic, last, &pm.PartitionId); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.LeaveConsumerGroup(stream, topic, gid); err != nil {
		b.Fatal(err)
	}
	return joined
}

// transportLoop polls and commits through a Subscription; it returns when
// it had joined its group.
func transportLoop(b *testing.B, tr *iggy.Transport, group string) (joined joinMark) {
	ctx := context.Background()
	sub, err := tr.Join(ctx, "t", group)
	if err != nil {
		b.Fatal(err)
	}
	joined = markJoin()
	for got := 0; got < benchMessages; {
		recs, err := sub.Poll(ctx, benchBatch)
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) == 0 {
			b.Fatalf("transport starved after %d messages", got)
		}
		got += len(recs)
		last := recs[len(recs)-1]
		if err := sub.Commit(ctx, last.Partition, last.Offset); err != nil {
			b.Fatal(err)
		}
	}
	if err := sub.Leave(ctx); err != nil {
		b.Fatal(err)
	}
	return joined
}

func benchIdent(b *testing.B, name string) iggcon.Identifier {
	id, err := iggcon.NewIdentifier(name)
	if err != nil {
		b.Fatal(err)
	}
	return id
}
