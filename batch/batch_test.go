package batch_test

import (
	"context"
	"errors"
	"fmt"
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
