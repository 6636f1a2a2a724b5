package transporttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// RunConsumer runs the reliable consumer's core scenarios over a transport:
// what the runtime promises must hold whatever log is underneath. Each
// scenario uses fresh topic and group names.
func RunConsumer(t *testing.T, newTransport func(t *testing.T) runtime.Transport) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(*testing.T, runtime.Transport)
	}{
		{"HandlesEveryMessageAndCommitsAfterwards", scenarioHandlesAndCommits},
		{"PoisonIsParkedVerbatimAndCommitted", scenarioPoisonParked},
		{"DuplicateIsDropped", scenarioDuplicateDropped},
		{"DeadLetterPublishFailureRedeliversOneCapsule", scenarioDeadLetterFailure},
		{"LanesHandleEveryMessageOnceInConversationOrder", scenarioLanes},
		{"RestartResumesAfterTheCommittedOffset", scenarioRestartResumes},
		{"WarmDedupSkipsAPreRestartDuplicate", scenarioWarmDedup},
		{"WarmDedupRestoresTheFenceHighWater", scenarioWarmDedupRestoresTheFence},
		{"HostileHandlerErrorsNeverStopTheConsumer", scenarioHostileErrorsNeverStopTheConsumer},
		{"RequestPicksUpAReplyTopicCreatedByItsReply", scenarioRequestPicksUpALateReplyTopic},
		{"RedriveRepublishesOnceAndConsumedReportsIt", scenarioRedrive},
		{"GraceTimeoutCommitsWhatWasHandledAndKeepsThePartitionSerial", scenarioGraceTimeout(runtime.Serial)},
		{"GraceTimeoutCommitsWhatWasHandledAndKeepsThePartitionLanes", scenarioGraceTimeout(runtime.PerPartition(2))},
		{"GraceTimeoutCommitsWhatWasHandledAndKeepsThePartitionPerConversation", scenarioGraceTimeout(runtime.PerConversation(4))},
		{"PerConversationKeepsConversationOrderAndRunsInParallel", scenarioPerConversationOrderAndParallelism},
		{"PerConversationWatermarkStaysBelowAnUnhandledRecord", scenarioPerConversationWatermark},
		{"PerConversationPoisonHoldsOnlyItsConversation", scenarioPerConversationPoison},
		{"PerConversationSameIdempotencyKeyInFlightRunsOnce", scenarioPerConversationSameKeyInFlight},
		{"PerConversationDrainFinishesWhatRunsAndCommitsTheWatermark", scenarioPerConversationDrain},
		{"PerConversationRebalanceWithRecordsInFlightLosesNothing", scenarioPerConversationRebalance},
		{"PerConversationHotBacklogIsDeferredAndReadAgainInOrder", scenarioPerConversationHotBacklog},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, newTransport(t)) })
	}
}

// world is one scenario's topics, group and helpers.
type world struct {
	t        *testing.T
	tr       runtime.Transport
	ctx      context.Context
	topic    string
	dlq      string
	group    string
	handled  chan string
	parked   chan runtime.DeadLetter
	nextConv uint64
}

func newWorld(t *testing.T, tr runtime.Transport, partitions uint32) *world {
	t.Helper()
	ctx := t.Context()
	w := &world{t: t, tr: tr, ctx: ctx, topic: freshName(t, "in"), dlq: freshName(t, "dlq"), group: freshName(t, "g"),
		handled: make(chan string, 1024), parked: make(chan runtime.DeadLetter, 64)}
	if err := tr.EnsureTopics(ctx, partitions, w.topic, w.dlq); err != nil {
		t.Fatal(err)
	}
	return w
}

// conv returns a fresh conversation id.
func (w *world) conv() wire.ID {
	w.nextConv++
	var salt [8]byte
	copy(salt[:], w.group)
	return wire.IDFromUint128(uint64(len(w.group))<<32|uint64(salt[len(salt)-1]), w.nextConv)
}

// send publishes a plain message and returns its position.
func (w *world) send(prov wire.Provenance, body string) runtime.Position {
	w.t.Helper()
	headers, err := prov.Headers()
	if err != nil {
		w.t.Fatal(err)
	}
	pos, err := w.tr.Publish(w.ctx, w.topic, runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: []byte(body)})
	if err != nil {
		w.t.Fatal(err)
	}
	return pos[0]
}

// client returns a quiet client over the world's transport, closed at the
// end of the test.
func (w *world) client() *runtime.Client {
	c := runtime.NewClient(w.tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	w.t.Cleanup(func() { _ = c.Close() })
	return c
}

// consumer is a running consumer of the world.
type consumer struct {
	stop chan struct{}
	done chan error
}

// start runs a consumer whose handler reports every body it handles and
// rejects bodies starting with "poison".
func (w *world) start(tr runtime.Transport, mutate func(*runtime.ConsumerConfig)) *consumer {
	w.t.Helper()
	cfg := runtime.ConsumerConfig{
		Topic: w.topic,
		Group: w.group,
		Agent: "worker",
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			body := string(c.Message().Body())
			if bytes.HasPrefix(c.Message().Body(), []byte("poison")) {
				return runtime.Reject(fmt.Errorf("refusing %s", body))
			}
			w.handled <- body
			return nil
		}),
		Client: runtime.NewClient(tr, runtime.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}),
		Tuning: runtime.Tuning{
			DeadLetterTopic: w.dlq,
			DeadLetterSink:  func(_ context.Context, dl runtime.DeadLetter) { w.parked <- dl },
		},
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := runtime.NewConsumer(tr, cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(w.ctx)
	k := &consumer{stop: make(chan struct{}), done: make(chan error, 1)}
	ready := make(chan struct{})
	go func() { k.done <- c.Run(ctx, func() { close(ready) }, k.stop) }()
	select {
	case <-ready:
	case err := <-k.done:
		cancel()
		w.t.Fatalf("consumer stopped before ready: %v", err)
	case <-w.ctx.Done():
		w.t.Fatal("consumer not ready")
	}
	w.t.Cleanup(func() {
		cancel()
		<-k.done
		k.done <- nil
	})
	return k
}

// shutdown stops a consumer gracefully and returns Run's result.
func (w *world) shutdown(k *consumer) error {
	close(k.stop)
	return w.result(k)
}

// result waits for a consumer to end on its own.
func (w *world) result(k *consumer) error {
	select {
	case err := <-k.done:
		k.done <- err
		return err
	case <-w.ctx.Done():
		w.t.Fatal("consumer did not stop")
		return nil
	}
}

// expect waits for n handled bodies and returns them.
func (w *world) expect(n int) []string {
	w.t.Helper()
	var got []string
	for len(got) < n {
		select {
		case b := <-w.handled:
			got = append(got, b)
		case <-w.ctx.Done():
			w.t.Fatalf("handled %d of %d: %v", len(got), n, got)
		}
	}
	return got
}

// nothingMore fails if any further message was handled.
func (w *world) nothingMore() {
	w.t.Helper()
	select {
	case b := <-w.handled:
		w.t.Fatalf("unexpectedly handled %q", b)
	default:
	}
}

func (w *world) deadLetter() runtime.DeadLetter {
	w.t.Helper()
	select {
	case dl := <-w.parked:
		return dl
	case <-w.ctx.Done():
		w.t.Fatal("no dead letter")
		return runtime.DeadLetter{}
	}
}

// stored returns the group's committed offsets of every partition.
func (w *world) stored() map[uint32]uint64 {
	w.t.Helper()
	n, err := w.tr.Partitions(w.ctx, w.topic)
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[uint32]uint64{}
	for p := uint32(0); p < n; p++ {
		off, ok, err := w.tr.StoredOffset(w.ctx, w.topic, w.group, p)
		if err != nil {
			w.t.Fatal(err)
		}
		if ok {
			out[p] = off
		}
	}
	return out
}

// capsules returns the dead-letter topic's capsules.
func (w *world) capsules() []*wire.DeadLetter {
	w.t.Helper()
	n, err := w.tr.Partitions(w.ctx, w.dlq)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []*wire.DeadLetter
	for p := uint32(0); p < n; p++ {
		recs, err := w.tr.ReadRange(w.ctx, w.dlq, p, 0, 1000)
		if err != nil {
			w.t.Fatal(err)
		}
		for _, r := range recs {
			d, err := wire.DecodeDeadLetter(r.Payload)
			if err != nil {
				w.t.Fatalf("capsule %v: %v", r.Position, err)
			}
			out = append(out, d)
		}
	}
	return out
}

func scenarioHandlesAndCommits(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 2)
	last := map[uint32]uint64{}
	for i := range 20 {
		pos := w.send(wire.Provenance{Conversation: w.conv()}, fmt.Sprintf("m%d", i))
		last[pos.Partition] = pos.Offset
	}
	k := w.start(tr, nil)
	if got := w.expect(20); len(got) != 20 {
		t.Fatal(got)
	}
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	if got := w.stored(); fmt.Sprint(got) != fmt.Sprint(last) {
		t.Fatalf("stored offsets %v, want %v", got, last)
	}
}

func scenarioPoisonParked(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	k := w.start(tr, nil)
	pos := w.send(wire.Provenance{Conversation: w.conv(), Agent: "shop"}, "poison pill")
	w.send(wire.Provenance{Conversation: w.conv()}, "after")
	dl := w.deadLetter()
	if dl.PublishErr != nil || dl.Capsule.Reason != wire.ReasonRejected || string(dl.Capsule.Payload) != "poison pill" ||
		dl.Capsule.Source.PartitionID != pos.Partition || dl.Capsule.Source.Offset != pos.Offset {
		t.Fatalf("dead letter %+v (publish %v)", dl.Capsule, dl.PublishErr)
	}
	w.expect(1)
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	caps := w.capsules()
	if len(caps) != 1 || string(caps[0].Payload) != "poison pill" {
		t.Fatalf("capsules %+v", caps)
	}
	if got := w.stored(); got[pos.Partition] != pos.Offset+1 {
		t.Fatalf("stored %v", got)
	}
}

func scenarioDuplicateDropped(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	k := w.start(tr, nil)
	c := w.conv()
	w.send(wire.Provenance{Conversation: c, Agent: "shop", IdempotencyKey: "order-1"}, "first")
	w.send(wire.Provenance{Conversation: c, Agent: "shop", IdempotencyKey: "order-1"}, "duplicate")
	w.send(wire.Provenance{Conversation: c, Agent: "shop", IdempotencyKey: "order-2"}, "second")
	if got := w.expect(2); got[0] != "first" || got[1] != "second" {
		t.Fatalf("handled %v", got)
	}
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	w.nothingMore()
}

func scenarioDeadLetterFailure(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	faulty := NewFaulty(tr)
	faulty.FailPublish(func(topic string) error {
		if topic == w.dlq {
			return errors.New("dead-letter topic unavailable")
		}
		return nil
	})
	k := w.start(faulty, nil)
	w.send(wire.Provenance{Conversation: w.conv()}, "poison")
	if dl := w.deadLetter(); dl.PublishErr == nil {
		t.Fatal("the sink must see the failed publish")
	}
	if err := w.result(k); err == nil {
		t.Fatal("the consumer must stop when a capsule cannot be published")
	}
	if got := w.stored(); len(got) != 0 {
		t.Fatalf("committed %v although the capsule was lost", got)
	}
	faulty.FailPublish(nil)
	k = w.start(faulty, nil)
	if dl := w.deadLetter(); dl.PublishErr != nil {
		t.Fatal(dl.PublishErr)
	}
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	if n := len(w.capsules()); n != 1 {
		t.Fatalf("%d capsules, want exactly 1", n)
	}
}

func scenarioLanes(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 4)
	convs := []wire.ID{w.conv(), w.conv(), w.conv(), w.conv(), w.conv()}
	for i := range 50 {
		w.send(wire.Provenance{Conversation: convs[i%len(convs)]}, fmt.Sprintf("%d/%03d", i%len(convs), i))
	}
	k := w.start(tr, func(c *runtime.ConsumerConfig) { c.Concurrency = runtime.PerPartition(2); c.PollBatch = 7 })
	got := w.expect(50)
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	lastOf := map[byte]string{}
	for _, b := range got {
		if seen[b] {
			t.Fatalf("%s handled twice", b)
		}
		seen[b] = true
		if prev := lastOf[b[0]]; prev > b {
			t.Fatalf("conversation %c out of order: %s after %s", b[0], b, prev)
		}
		lastOf[b[0]] = b
	}
}

func scenarioRestartResumes(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 2)
	for i := range 10 {
		w.send(wire.Provenance{Conversation: w.conv()}, fmt.Sprintf("before-%d", i))
	}
	k := w.start(tr, nil)
	w.expect(10)
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		w.send(wire.Provenance{Conversation: w.conv()}, fmt.Sprintf("after-%d", i))
	}
	k = w.start(tr, nil)
	for _, b := range w.expect(5) {
		if len(b) < 6 || b[:6] != "after-" {
			t.Fatalf("re-handled %q after a clean shutdown", b)
		}
	}
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	w.nothingMore()
}

func scenarioWarmDedup(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 2)
	warm := func(c *runtime.ConsumerConfig) { c.WarmDedup = true }
	k := w.start(tr, warm)
	c := w.conv()
	w.send(wire.Provenance{Conversation: c, Agent: "shop", IdempotencyKey: "job"}, "job")
	w.expect(1)
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	k = w.start(tr, warm)
	w.send(wire.Provenance{Conversation: c, Agent: "shop", IdempotencyKey: "job"}, "job again")
	w.send(wire.Provenance{Conversation: c, Agent: "shop", IdempotencyKey: "job-2"}, "job-2")
	if got := w.expect(1); got[0] != "job-2" {
		t.Fatalf("handled %v", got)
	}
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
	w.nothingMore()
}
