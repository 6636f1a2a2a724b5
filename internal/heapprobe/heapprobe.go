// Package heapprobe measures how much heap a fold of a topic holds while it
// reads: a transport wrapper that samples the live heap before every read,
// so a fold that keeps every record it has read shows it, and one that
// streams does not. Tests and the reliability suite use it.
package heapprobe

import (
	"context"
	goruntime "runtime"
	"sync"

	"github.com/lasergo/laser/runtime"
)

// Transport wraps a runtime.Transport and samples the live heap (after a
// collection) before each ReadRange call and when Sample is called.
type Transport struct {
	runtime.Transport
	mu   sync.Mutex
	base uint64
	peak uint64
}

// Wrap returns t wrapped; call Reset before the fold to measure.
func Wrap(t runtime.Transport) *Transport { return &Transport{Transport: t} }

// Live returns the live heap after a full collection.
func Live() uint64 {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Reset takes the current live heap as the baseline and clears the peak.
func (p *Transport) Reset() {
	base := Live()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.base, p.peak = base, base
}

// Held returns the most live heap seen above the baseline at a read.
func (p *Transport) Held() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak - min(p.peak, p.base)
}

// Sample takes one sample of the live heap now: after a fold returned, what
// its result still holds.
func (p *Transport) Sample() {
	live := Live()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peak = max(p.peak, live)
}

// ReadRange samples the live heap, then reads.
func (p *Transport) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	p.Sample()
	return p.Transport.ReadRange(ctx, topic, partition, offset, count)
}
