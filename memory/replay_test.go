package memory_test

import (
	"sync/atomic"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// replayFirst re-appends, through a client with no key, the first record of
// each partition onto the named key's partition: among them the captured,
// validly signed write of the key's first value.
func replayFirst(t *testing.T, w *signedWorld, topic, namedID string) {
	t.Helper()
	ctx := t.Context()
	key := wire.PartitionKey(conversation.Derive(namedID))
	n, err := w.tr.Partitions(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	replayed := 0
	for p := range n {
		recs, err := w.tr.ReadRange(ctx, topic, p, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if _, err := w.anybody.Publish(ctx, topic, runtime.Outgoing{Key: key, Headers: r.Headers.Decode(), Payload: r.Payload}); err != nil {
				t.Fatal(err)
			}
			replayed++
		}
	}
	if replayed == 0 {
		t.Fatal("nothing to replay")
	}
}

func namedValue(t *testing.T, m *memory.Store, key string) (string, bool) {
	t.Helper()
	v, ok, err := m.Named(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(v), ok
}

func TestReplayedSignedSetNamedDoesNotRollBack(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	mem := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.support, Agent: "support"})
	if err := mem.SetNamed(ctx, "refund_limit", []byte("1000000")); err != nil {
		t.Fatal(err)
	}
	if err := mem.SetNamed(ctx, "refund_limit", []byte("500")); err != nil {
		t.Fatal(err)
	}
	replayFirst(t, w, mem.Topic(), "billing/refund_limit")
	for name, m := range map[string]*memory.Store{"writer": mem, "fresh": memory.New(w.client, memory.Config{Namespace: "billing"})} {
		if v, _ := namedValue(t, m, "refund_limit"); v != "500" {
			t.Errorf("%s reads refund_limit = %q after a replay, want %q", name, v, "500")
		}
	}
}

func TestReplayedSignedSetNamedDoesNotResurrectAForgottenKey(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	mem := memory.New(w.client, memory.Config{Namespace: "billing", Key: w.support, Agent: "support"})
	if err := mem.SetNamed(ctx, "refund_limit", []byte("1000000")); err != nil {
		t.Fatal(err)
	}
	if err := mem.ForgetNamed(ctx, "refund_limit"); err != nil {
		t.Fatal(err)
	}
	replayFirst(t, w, mem.Topic(), "billing/refund_limit")
	for name, m := range map[string]*memory.Store{"writer": mem, "fresh": memory.New(w.client, memory.Config{Namespace: "billing"})} {
		if v, ok := namedValue(t, m, "refund_limit"); ok {
			t.Errorf("%s reads the forgotten refund_limit as %q after a replay", name, v)
		}
	}
}

// fallingIDs mints ever smaller ids, as ULIDs minted in one millisecond
// may be (their random part is not ordered).
type fallingIDs struct{ next atomic.Uint64 }

func (f *fallingIDs) NewID() wire.ID { return wire.IDFromUint128(1, 1000-f.next.Add(1)) }

func TestSignedSetNamedKeepsTheLastValueWhenIDsFall(t *testing.T) {
	ctx := t.Context()
	w := newSignedWorld(t)
	writer := runtime.NewClient(w.tr, runtime.ClientConfig{IDs: &fallingIDs{}})
	mem := memory.New(writer, memory.Config{Namespace: "billing", Key: w.support, Agent: "support"})
	for _, v := range []string{"1000000", "700", "500"} {
		if err := mem.SetNamed(ctx, "refund_limit", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := namedValue(t, memory.New(w.client, memory.Config{Namespace: "billing"}), "refund_limit"); v != "500" {
		t.Fatalf("a fresh Store reads refund_limit = %q, want the last write %q", v, "500")
	}
}
