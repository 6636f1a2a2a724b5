package runtime

import (
	"fmt"
	goruntime "runtime"
	"testing"

	"github.com/lasergo/laser/wire"
)

// TestFenceEntriesDoNotKeepTheirMessagesAlive decodes fenced plain messages
// of distinct conversations the way the consumer does (slabs of messages,
// one per batch) and passes each through the fence gate with its sender as
// the consumer scopes it: once the messages are dropped, what the gate
// retains per conversation must be its entry, not the slab of messages the
// sender's text was read into.
func TestFenceEntriesDoNotKeepTheirMessagesAlive(t *testing.T) {
	const n = 8_192 // under the soft cap: nothing is swept
	recs := make([]Incoming, n)
	for i := range recs {
		fence := uint64(1)
		prov := wire.Provenance{Conversation: wire.IDFromUint128(9, uint64(i)), Agent: "planner", IdempotencyKey: fmt.Sprintf("k-%d", i), Fence: &fence}
		headers, err := prov.Headers()
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = Incoming{Position: Position{Offset: uint64(i)}, Headers: wire.MustEncodeHeaders(headers), Payload: make([]byte, 256)}
	}
	before := liveHeap()
	g := newFenceGate()
	var slab messageSlab
	for i := range recs {
		if i%500 == 0 {
			slab.reset(min(500, n-i))
		}
		m, err := slab.decode("t", &recs[i], 0)
		if err != nil {
			t.Fatal(err)
		}
		if !g.accept(m.Provenance.Agent, m.Provenance.Conversation, *m.Provenance.Fence, 1) {
			t.Fatalf("record %d: a first fence was refused", i)
		}
	}
	slab.reset(0)
	after := liveHeap()
	goruntime.KeepAlive(g)
	// A message alone is ~480 bytes; an entry (key, index, mark and a copy
	// of the sender) well under half of that.
	if per := retained(before, after) / n; per > 240 {
		t.Errorf("the fence gate retains %d bytes per conversation: its keys keep the decoded messages alive", per)
	}
	// The marks are intact: a stale fence is refused, the same one passes.
	conv := wire.IDFromUint128(9, 7)
	if g.accept("planner", conv, 0, 2) || !g.accept("planner", conv, 1, 2) {
		t.Error("the mark of a tracked conversation changed")
	}
}

// TestFenceGateReusesTheSlotsOfDroppedEntriesWithoutTheirMarks sheds the
// gate past its hard cap and then tracks new conversations in the freed
// slots: a new conversation starts without a mark (a freed slot's high
// fence is not inherited), and a kept one keeps its own.
func TestFenceGateReusesTheSlotsOfDroppedEntriesWithoutTheirMarks(t *testing.T) {
	g := newFenceGate()
	now := uint64(1)
	for i := 0; i <= fenceHardCap; i++ {
		g.accept("a", wire.IDFromUint128(1, uint64(i)), 5, now)
		now++
	}
	if g.len() != fenceSoftCap {
		t.Fatalf("after shedding the gate tracks %d conversations, want %d", g.len(), fenceSoftCap)
	}
	if len(g.free) == 0 {
		t.Fatal("shedding freed no slots")
	}
	for i := range 2 * fenceHardCap / 3 {
		if !g.accept("b", wire.IDFromUint128(2, uint64(i)), 1, now) {
			t.Fatalf("new conversation %d refused its first fence 1: it inherited a dropped entry's mark", i)
		}
	}
	newest := wire.IDFromUint128(1, fenceHardCap)
	if g.accept("a", newest, 4, now) {
		t.Error("a stale fence passed on a conversation kept through the shedding")
	}
	if len(g.entries) > fenceHardCap+1 {
		t.Errorf("the gate holds %d entry slots, more than its hard cap: freed slots were not reused", len(g.entries))
	}
}
