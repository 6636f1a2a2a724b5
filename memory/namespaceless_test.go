package memory_test

import (
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// unstamped appends rec as the reference's Rust LogMemory writes forget and
// feedback: provenance headers only, no agdx.mem.ns.
func unstamped(t *testing.T, c *runtime.Client, conv wire.ID, rec wire.MemoryRecord) {
	t.Helper()
	payload, err := rec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	prov := wire.Provenance{Conversation: conv, Agent: "rust-agent", IdempotencyKey: c.IDs().NewID().String()}
	h, err := prov.Headers()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Publish(t.Context(), runtime.TopicAudit, runtime.Outgoing{Key: prov.PartitionKey(), Headers: h, Payload: payload}); err != nil {
		t.Fatal(err)
	}
}

// A forget without a namespace header applies to the item it names, and a
// namespace-less item stays out: a Store's namespace is still its own.
func TestNamespacelessForgetAppliesToItsTarget(t *testing.T) {
	c := runtime.NewClient(embedlog.New("shop", embedlog.Config{}), runtime.ClientConfig{})
	if err := c.Bootstrap(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	mem := memory.New(c, memory.Config{Namespace: "notes"})
	conv := conversation.Derive("namespaceless")
	scope := memory.Scope{Conversation: conv}
	gone, err := mem.Remember(t.Context(), scope, memory.Fact, []byte("forgotten by a Rust agent"))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := mem.Remember(t.Context(), scope, memory.Fact, []byte("kept"))
	if err != nil {
		t.Fatal(err)
	}
	unstamped(t, c, conv, wire.MemoryRecord{Op: wire.MemoryForget, ID: gone.String()})
	stray := c.IDs().NewID()
	unstamped(t, c, conv, wire.MemoryRecord{Op: wire.MemoryItem, ID: stray.String(), Kind: "fact", Body: []byte("no namespace")})

	items, err := mem.Recall(t.Context(), scope, memory.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].ID != kept {
		t.Fatalf("recalled %v, want only %s (the forgotten one gone, the namespace-less item left out)", items, kept)
	}
}
