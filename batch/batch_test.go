package batch_test

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/batch"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/internal/featuretest"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
)

var epoch = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// countingLog records the size of each Publish call it passes on.
type countingLog struct {
	runtime.Transport
	mu    sync.Mutex
	calls []int
	fail  error
}

func (c *countingLog) Publish(ctx context.Context, topic string, recs ...runtime.Outgoing) ([]runtime.Position, error) {
	c.mu.Lock()
	c.calls = append(c.calls, len(recs))
	fail := c.fail
	c.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	return c.Transport.Publish(ctx, topic, recs...)
}

func (c *countingLog) batches() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

func newLog(t *testing.T) *countingLog {
	t.Helper()
	log := embedlog.New("batch", embedlog.Config{})
	if err := log.EnsureTopics(t.Context(), 1, "events"); err != nil {
		t.Fatal(err)
	}
	return &countingLog{Transport: log}
}

func rec(n int, size int) runtime.Outgoing {
	p := make([]byte, size)
	copy(p, fmt.Sprintf("r%d", n))
	return runtime.Outgoing{Key: "k", Payload: p}
}

func waitAll(t *testing.T, ps []batch.Pending) []runtime.Position {
	t.Helper()
	out := make([]runtime.Position, len(ps))
	for i, p := range ps {
		pos, err := p.Wait(t.Context())
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		out[i] = pos
	}
	return out
}

func TestBatchFlushesAtRecordCount(t *testing.T) {
	log := newLog(t)
	clk := lasertest.NewManualClock(epoch)
	b, err := batch.New(t.Context(), log, "events", batch.Config{MaxRecords: 3, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context())
	var ps []batch.Pending
	for i := range 6 {
		ps = append(ps, b.Append(t.Context(), rec(i, 8)))
	}
	pos := waitAll(t, ps)
	for i, p := range pos {
		if p.Offset != uint64(i) {
			t.Errorf("record %d landed at %v, want offset %d", i, p, i)
		}
	}
	if got := log.batches(); !slices.Equal(got, []int{3, 3}) {
		t.Errorf("publish calls = %v, want [3 3]", got)
	}
}

func TestBatchFlushesAtByteSize(t *testing.T) {
	log := newLog(t)
	clk := lasertest.NewManualClock(epoch)
	b, err := batch.New(t.Context(), log, "events", batch.Config{MaxBytes: 1000, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context())
	ps := []batch.Pending{
		b.Append(t.Context(), rec(0, 400)),
		b.Append(t.Context(), rec(1, 400)),
		b.Append(t.Context(), rec(2, 400)),
	}
	waitAll(t, ps[:2])
	select {
	case <-ps[2].Done():
		t.Fatal("the record past the byte bound was published before its linger")
	default:
	}
	if got := log.batches(); !slices.Equal(got, []int{2}) {
		t.Errorf("publish calls = %v, want [2]", got)
	}
}

func TestBatchFlushesAtLinger(t *testing.T) {
	log := newLog(t)
	clk := lasertest.NewManualClock(epoch)
	b, err := batch.New(t.Context(), log, "events", batch.Config{Linger: 20 * time.Millisecond, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context())
	p := b.Append(t.Context(), rec(0, 8))
	if err := clk.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if d, _ := clk.NextTimer(); d != 20*time.Millisecond {
		t.Errorf("linger timer = %v, want 20ms", d)
	}
	clk.Advance(19 * time.Millisecond)
	select {
	case <-p.Done():
		t.Fatal("published before the linger passed")
	default:
	}
	clk.Advance(time.Millisecond)
	waitAll(t, []batch.Pending{p})
}

func TestBatchLingerHasAFloor(t *testing.T) {
	clk := lasertest.NewManualClock(epoch)
	b, err := batch.New(t.Context(), newLog(t), "events", batch.Config{Linger: time.Nanosecond, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context())
	b.Append(t.Context(), rec(0, 8))
	if err := clk.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if d, _ := clk.NextTimer(); d != batch.MinLinger {
		t.Errorf("linger timer = %v, want the floor %v", d, batch.MinLinger)
	}
}

func TestBatchCloseFlushes(t *testing.T) {
	log := newLog(t)
	b, err := batch.New(t.Context(), log, "events", batch.Config{Clock: lasertest.NewManualClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	p := b.Append(t.Context(), rec(0, 8))
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitAll(t, []batch.Pending{p})
	if err := b.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestBatchFlushPublishesAtOnce(t *testing.T) {
	log := newLog(t)
	b, err := batch.New(t.Context(), log, "events", batch.Config{Clock: lasertest.NewManualClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context())
	p := b.Append(t.Context(), rec(0, 8))
	if err := b.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Flush returned before the record was published")
	}
}

func TestBatchPublishErrorReachesEveryAppender(t *testing.T) {
	log := newLog(t)
	boom := errors.New("disk full")
	log.fail = boom
	b, err := batch.New(t.Context(), log, "events", batch.Config{MaxRecords: 2, Clock: lasertest.NewManualClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context())
	for _, p := range []batch.Pending{b.Append(t.Context(), rec(0, 8)), b.Append(t.Context(), rec(1, 8))} {
		if _, err := p.Wait(t.Context()); !errors.Is(err, boom) {
			t.Errorf("Wait = %v, want the publish error", err)
		}
	}
}

func TestBatchAppendAfterCloseIsRefused(t *testing.T) {
	b, err := batch.New(t.Context(), newLog(t), "events", batch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(t.Context(), rec(0, 8)).Wait(t.Context()); !errors.Is(err, batch.ErrClosed) {
		t.Errorf("Wait = %v, want ErrClosed", err)
	}
}

func TestBatchEndedContextFailsQueuedRecords(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	b, err := batch.New(ctx, newLog(t), "events", batch.Config{Clock: lasertest.NewManualClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	p := b.Append(t.Context(), rec(0, 8))
	cancel()
	if _, err := p.Wait(t.Context()); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait = %v, want context.Canceled", err)
	}
	if _, err := b.Append(t.Context(), rec(1, 8)).Wait(t.Context()); !errors.Is(err, context.Canceled) {
		t.Errorf("Append after the context ended: %v, want context.Canceled", err)
	}
}

func TestBatchAppendBlocksAtMaxQueued(t *testing.T) {
	log := newLog(t)
	log.Transport = stalled{log.Transport}
	b, err := batch.New(t.Context(), log, "events", batch.Config{MaxRecords: 1, MaxQueued: 1, Clock: lasertest.NewManualClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	b.Append(t.Context(), rec(0, 8)) // taken by a publish that never returns
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := b.Append(ctx, rec(1, 8)).Wait(t.Context()); !errors.Is(err, context.Canceled) {
		t.Errorf("Append over MaxQueued = %v, want the caller's context error", err)
	}
}

// stalled is a log whose Publish waits for its context.
type stalled struct{ runtime.Transport }

func (stalled) Publish(ctx context.Context, _ string, _ ...runtime.Outgoing) ([]runtime.Position, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestBatchRefusesBadConfig(t *testing.T) {
	log := newLog(t)
	for name, c := range map[string]batch.Config{
		"MaxRecords": {MaxRecords: -1},
		"MaxBytes":   {MaxBytes: -1},
		"Linger":     {Linger: -time.Second},
		"MaxQueued":  {MaxQueued: -1},
	} {
		if _, err := batch.New(t.Context(), log, "events", c); err == nil {
			t.Errorf("negative %s accepted", name)
		}
	}
	if _, err := batch.New(t.Context(), log, "", batch.Config{}); err == nil {
		t.Error("empty topic accepted")
	}
	if _, err := batch.New(t.Context(), nil, "events", batch.Config{}); err == nil {
		t.Error("nil publisher accepted")
	}
}

// TestBatchOverTransports publishes through the client's producer on every
// log and reads each record back where its Pending said it landed.
func TestBatchOverTransports(t *testing.T) {
	for _, tr := range featuretest.Transports(t, "batch") {
		t.Run(tr.Name, func(t *testing.T) {
			client := runtime.NewClient(tr.New(t), runtime.ClientConfig{})
			if err := client.Transport().EnsureTopics(t.Context(), 2, "batch.events"); err != nil {
				t.Fatal(err)
			}
			b, err := batch.New(t.Context(), client, "batch.events", batch.Config{MaxRecords: 64})
			if err != nil {
				t.Fatal(err)
			}
			const n = 300
			ps := make([]batch.Pending, n)
			for i := range n {
				r := rec(i, 256)
				r.Key = fmt.Sprintf("k%d", i%5)
				ps[i] = b.Append(t.Context(), r)
			}
			if err := b.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			for i, pos := range waitAll(t, ps) {
				got, err := client.Transport().ReadRange(t.Context(), "batch.events", pos.Partition, pos.Offset, 1)
				if err != nil || len(got) != 1 {
					t.Fatalf("read record %d at %v: %v (%d records)", i, pos, err, len(got))
				}
				if want := fmt.Sprintf("r%d", i); string(got[0].Payload[:len(want)]) != want {
					t.Fatalf("record at %v = %q, want %q", pos, got[0].Payload[:len(want)], want)
				}
			}
		})
	}
}

// gated is a log whose Publish waits for a value on release before it
// publishes, so a test holds a batch in flight.
type gated struct {
	runtime.Transport
	release chan struct{}
}

func (g gated) Publish(ctx context.Context, topic string, recs ...runtime.Outgoing) ([]runtime.Position, error) {
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Transport.Publish(ctx, topic, recs...)
}

func TestBatchAppendResumesWhenItsBatchIsPublished(t *testing.T) {
	log := newLog(t)
	g := gated{Transport: log.Transport, release: make(chan struct{})}
	log.Transport = g
	b, err := batch.New(t.Context(), log, "events", batch.Config{MaxRecords: 1, MaxQueued: 1, Clock: lasertest.NewManualClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context())
	first := b.Append(t.Context(), rec(0, 8)) // held in flight by the gate
	second := make(chan batch.Pending)
	go func() { second <- b.Append(t.Context(), rec(1, 8)) }()
	select {
	case <-second:
		t.Fatal("Append returned while MaxQueued records waited")
	case <-first.Done():
		t.Fatal("the first record was published through a closed gate")
	case g.release <- struct{}{}: // the first batch publishes and frees its room
	}
	p := <-second
	g.release <- struct{}{}
	got := waitAll(t, []batch.Pending{first, p})
	if got[0].Offset != 0 || got[1].Offset != 1 {
		t.Errorf("positions = %v, want offsets 0 and 1", got)
	}
}

// TestBatchWaitingAppendersAllResume has many appenders contend for a
// queue of two: every one of them is woken as room frees, none is lost.
func TestBatchWaitingAppendersAllResume(t *testing.T) {
	log := newLog(t)
	b, err := batch.New(t.Context(), log, "events", batch.Config{MaxRecords: 2, MaxQueued: 2, Clock: lasertest.NewManualClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	const appenders, each = 8, 50
	var wg sync.WaitGroup
	ps := make([][]batch.Pending, appenders)
	for a := range appenders {
		wg.Go(func() {
			for i := range each {
				ps[a] = append(ps[a], b.Append(t.Context(), rec(a*each+i, 8)))
			}
		})
	}
	wg.Wait()
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for a := range appenders {
		last := -1
		for _, pos := range waitAll(t, ps[a]) {
			if seen[pos.Offset] {
				t.Fatalf("offset %d given twice", pos.Offset)
			}
			seen[pos.Offset] = true
			if int(pos.Offset) <= last {
				t.Errorf("appender %d: offset %d after %d, want its records in order", a, pos.Offset, last)
			}
			last = int(pos.Offset)
		}
	}
	if len(seen) != appenders*each {
		t.Errorf("%d records published, want %d", len(seen), appenders*each)
	}
}

func TestBatchEndedContextReleasesAnAppenderWaitingForRoom(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	log := newLog(t)
	log.Transport = stalled{log.Transport}
	b, err := batch.New(ctx, log, "events", batch.Config{MaxRecords: 1, MaxQueued: 1, Clock: lasertest.NewManualClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	first := b.Append(t.Context(), rec(0, 8)) // taken by a publish that waits for ctx
	second := make(chan batch.Pending)
	go func() { second <- b.Append(t.Context(), rec(1, 8)) }()
	cancel()
	for i, p := range []batch.Pending{first, <-second} {
		if _, err := p.Wait(t.Context()); !errors.Is(err, context.Canceled) {
			t.Errorf("record %d: Wait = %v, want context.Canceled", i, err)
		}
	}
}

// TestBatchLingerCountsFromTheOpenBatchsFirstRecord keeps the flusher's
// timer across batches: armed for an earlier batch, it fires early for the
// open one and is re-armed for the rest of that batch's linger.
func TestBatchLingerCountsFromTheOpenBatchsFirstRecord(t *testing.T) {
	log := newLog(t)
	clk := lasertest.NewManualClock(epoch)
	b, err := batch.New(t.Context(), log, "events", batch.Config{MaxRecords: 2, Linger: 20 * time.Millisecond, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(t.Context())
	b.Append(t.Context(), rec(0, 8))
	if err := clk.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	clk.Advance(10 * time.Millisecond)
	waitAll(t, []batch.Pending{b.Append(t.Context(), rec(1, 8))}) // the count bound publishes both
	late := b.Append(t.Context(), rec(2, 8))                      // opens a batch 10 ms after the timer was armed
	clk.Advance(10 * time.Millisecond)                            // the first timer fires: too early for late
	if err := clk.BlockUntil(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if d, _ := clk.NextTimer(); d != 10*time.Millisecond {
		t.Errorf("re-armed linger = %v, want the 10ms left of the open batch's", d)
	}
	select {
	case <-late.Done():
		t.Fatal("a record was published before its own linger passed")
	default:
	}
	clk.Advance(10 * time.Millisecond)
	waitAll(t, []batch.Pending{late})
	if got := log.batches(); !slices.Equal(got, []int{2, 1}) {
		t.Errorf("publish calls = %v, want [2 1]", got)
	}
}

// discard is a publisher that keeps nothing and answers from one slice, so
// only the producer's own allocations are counted.
type discard struct{ pos []runtime.Position }

func (d discard) Publish(_ context.Context, _ string, recs ...runtime.Outgoing) ([]runtime.Position, error) {
	return d.pos[:len(recs)], nil
}

// TestBatchAppendAllocatesPerBatchNotPerRecord holds appending, flusher
// included, to a few allocations per batch (the outcome, its channel, the
// records' slice made once with room for the batch, the linger timer),
// shared by its 512 records.
func TestBatchAppendAllocatesPerBatchNotPerRecord(t *testing.T) {
	b, err := batch.New(t.Context(), discard{pos: make([]runtime.Position, batch.DefaultMaxRecords)}, "events", batch.Config{Clock: lasertest.NewManualClock(epoch)})
	if err != nil {
		t.Fatal(err)
	}
	r := rec(0, 256)
	const batches = 8
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	for range batches * batch.DefaultMaxRecords {
		b.Append(t.Context(), r)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	goruntime.ReadMemStats(&after)
	perBatch := float64(after.Mallocs-before.Mallocs) / batches
	t.Logf("%.1f allocations per batch of %d records", perBatch, batch.DefaultMaxRecords)
	if perBatch > 10 {
		t.Errorf("%.1f allocations per batch of %d records, want at most 10", perBatch, batch.DefaultMaxRecords)
	}
}
