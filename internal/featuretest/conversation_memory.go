package featuretest

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// mem returns a memory on a fresh topic.
func (w *conversationWorld) mem(opts memory.Config) *memory.Store {
	if opts.Topic == "" {
		opts.Topic = w.topic("mem", 3)
	}
	return memory.New(w.client, opts)
}

func (w *conversationWorld) recall(m *memory.Store, scope memory.Scope, q memory.Query) []memory.Item {
	w.t.Helper()
	items, err := m.Recall(w.ctx, scope, q)
	if err != nil {
		w.t.Fatal(err)
	}
	return items
}

func itemBodies(items []memory.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(it.Body)
	}
	return out
}

func (w *conversationWorld) remember(m *memory.Store, scope memory.Scope, body string) wire.ID {
	w.t.Helper()
	id, err := m.Remember(w.ctx, scope, memory.Fact, []byte(body))
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

func conversationMemoryRecall(w *conversationWorld) {
	m := w.mem(memory.Config{})
	conv, other := w.conv(), w.conv()
	w.remember(m, memory.Scope{Conversation: conv, Agent: "planner"}, "prefers email")
	w.remember(m, memory.Scope{Conversation: other, Agent: "planner"}, "someone else")
	w.remember(m, memory.Scope{Conversation: conv, Agent: "critic"}, "budget is tight")
	if _, err := m.Remember(w.ctx, memory.Scope{Conversation: conv, Agent: "planner"}, memory.Message, []byte("a turn")); err != nil {
		w.t.Fatal(err)
	}
	items := w.recall(m, memory.Scope{Conversation: conv}, memory.Query{})
	if got := itemBodies(items); !sameStrings(got, []string{"a turn", "budget is tight", "prefers email"}) {
		w.t.Fatalf("recalled %q", got)
	}
	if items[0].Kind != memory.Message || items[2].Kind != memory.Fact || items[2].Agent != "planner" || items[2].Conversation != conv {
		w.t.Fatalf("items %+v", items)
	}
	if got := itemBodies(w.recall(m, memory.Scope{Conversation: conv, Agent: "planner"}, memory.Query{})); !sameStrings(got, []string{"a turn", "prefers email"}) {
		w.t.Fatalf("recalled for the planner %q", got)
	}
	if got := itemBodies(w.recall(m, memory.Scope{Conversation: conv, Agent: "planner"}, memory.Query{Agent: "critic"})); !sameStrings(got, []string{"budget is tight"}) {
		w.t.Fatalf("query agent overrides the scope's: %q", got)
	}
	if got := itemBodies(w.recall(m, memory.Scope{Conversation: conv}, memory.Query{Limit: 2})); !sameStrings(got, []string{"a turn", "budget is tight"}) {
		w.t.Fatalf("limit keeps the most recent: %q", got)
	}
	if got := w.recall(m, memory.Scope{}, memory.Query{}); len(got) != 4 {
		w.t.Fatalf("a scope without a conversation recalls across all: %d items", len(got))
	}
	// A fresh Log rebuilds the same view from the log.
	if got := itemBodies(w.recall(memory.New(w.client, memory.Config{Topic: m.Topic()}), memory.Scope{Conversation: conv}, memory.Query{})); len(got) != 3 {
		w.t.Fatalf("a fresh memory recalled %q", got)
	}
}

func conversationMemoryForget(w *conversationWorld) {
	m := w.mem(memory.Config{})
	conv := w.conv()
	scope := memory.Scope{Conversation: conv}
	keep := w.remember(m, scope, "keep me")
	drop := w.remember(m, scope, "forget me")
	if got := w.recall(m, scope, memory.Query{}); len(got) != 2 {
		w.t.Fatalf("before forgetting: %d items", len(got))
	}
	if err := m.Forget(w.ctx, scope, drop); err != nil {
		w.t.Fatal(err)
	}
	if got := w.recall(m, scope, memory.Query{}); len(got) != 1 || got[0].ID != keep {
		w.t.Fatalf("after forgetting: %+v", got)
	}
	// A tombstone folded before its item (another partition) still wins.
	late := w.client.IDs().NewID()
	forget, _ := (&wire.MemoryRecord{Op: wire.MemoryForget, ID: late.String()}).Marshal()
	item, _ := (&wire.MemoryRecord{Op: wire.MemoryItem, ID: late.String(), Kind: "fact", Body: []byte("late")}).Marshal()
	headers := func() wire.Headers {
		h, _ := (&wire.Provenance{Conversation: conv}).Headers()
		return h
	}
	w.raw(m.Topic(), runtime.Outgoing{Key: wire.PartitionKey(conv), Headers: headers(), Payload: forget},
		runtime.Outgoing{Key: wire.PartitionKey(conv), Headers: headers(), Payload: item})
	fresh := memory.New(w.client, memory.Config{Topic: m.Topic()})
	if got := itemBodies(w.recall(fresh, scope, memory.Query{})); !sameStrings(got, []string{"keep me"}) {
		w.t.Fatalf("a fresh memory recalled %q", got)
	}
}

func conversationMemoryFeedback(w *conversationWorld) {
	m := w.mem(memory.Config{})
	scope := memory.Scope{Conversation: w.conv()}
	a := w.remember(m, scope, "a")
	w.remember(m, scope, "b")
	c := w.remember(m, scope, "c")
	if got := itemBodies(w.recall(m, scope, memory.Query{})); !sameStrings(got, []string{"c", "b", "a"}) {
		w.t.Fatalf("without feedback: %q", got)
	}
	for _, fb := range []struct {
		id wire.ID
		w  float32
	}{{c, 2}, {a, -1}, {c, 0.5}} {
		if _, err := m.Feedback(w.ctx, scope, fb.id, fb.w); err != nil {
			w.t.Fatal(err)
		}
	}
	items := w.recall(m, scope, memory.Query{})
	if got := itemBodies(items); !sameStrings(got, []string{"c", "b", "a"}) {
		w.t.Fatalf("with feedback: %q", got)
	}
	if !items[0].Scored || items[0].Score != 2.5 || items[1].Scored || items[2].Score != -1 {
		w.t.Fatalf("scores %+v", items)
	}
	if got := itemBodies(w.recall(m, scope, memory.Query{Limit: 1})); !sameStrings(got, []string{"c"}) {
		w.t.Fatalf("with feedback the limit keeps the best: %q", got)
	}
}

func conversationMemoryNamed(w *conversationWorld) {
	m := w.mem(memory.Config{Namespace: "prefs"})
	named := func(l *memory.Store, key string) (string, bool) {
		w.t.Helper()
		b, ok, err := l.Named(w.ctx, key)
		if err != nil {
			w.t.Fatal(err)
		}
		return string(b), ok
	}
	if _, ok := named(m, "tone"); ok {
		w.t.Fatal("an unset key is present")
	}
	for _, v := range []string{"formal", "casual"} {
		if err := m.SetNamed(w.ctx, "tone", []byte(v)); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := m.SetNamed(w.ctx, "lang", []byte("en")); err != nil {
		w.t.Fatal(err)
	}
	if v, ok := named(m, "tone"); !ok || v != "casual" {
		w.t.Fatalf("tone = %q, %v", v, ok)
	}
	fresh := memory.New(w.client, memory.Config{Topic: m.Topic(), Namespace: "prefs"})
	if v, ok := named(fresh, "tone"); !ok || v != "casual" {
		w.t.Fatalf("a fresh memory reads tone = %q, %v", v, ok)
	}
	if err := m.ForgetNamed(w.ctx, "tone"); err != nil {
		w.t.Fatal(err)
	}
	if _, ok := named(m, "tone"); ok {
		w.t.Fatal("a forgotten key is present")
	}
	if _, ok := named(fresh, "tone"); ok {
		w.t.Fatal("a forgotten key is present in the other memory")
	}
	if v, ok := named(fresh, "lang"); !ok || v != "en" {
		w.t.Fatalf("lang = %q, %v", v, ok)
	}
	// Named items are not recalled as items.
	if got := w.recall(fresh, memory.Scope{}, memory.Query{}); len(got) != 0 {
		w.t.Fatalf("named items recalled as items: %q", itemBodies(got))
	}
}

// countingTransport counts the records ReadRange returns.
type countingTransport struct {
	runtime.Transport
	read atomic.Int64
}

func (c *countingTransport) ReadRange(ctx context.Context, topic string, partition uint32, offset uint64, count int) ([]runtime.Incoming, error) {
	recs, err := c.Transport.ReadRange(ctx, topic, partition, offset, count)
	c.read.Add(int64(len(recs)))
	return recs, err
}

func conversationMemoryIncremental(w *conversationWorld) {
	topic := w.topic("incr", 3)
	counting := &countingTransport{Transport: w.tr}
	client := runtime.NewClient(counting, runtime.ClientConfig{})
	defer client.Close()
	m := memory.New(client, memory.Config{Topic: topic})
	scope := memory.Scope{Conversation: w.conv()}
	for _, b := range []string{"1", "2", "3", "4"} {
		w.remember(m, scope, b)
	}
	w.recall(m, scope, memory.Query{})
	// Each remember appends the item and its vector.
	if n := counting.read.Load(); n != 8 {
		w.t.Fatalf("first recall read %d records, want 8", n)
	}
	w.remember(m, memory.Scope{Conversation: w.conv()}, "5") // likely another partition
	w.remember(m, scope, "6")
	counting.read.Store(0)
	if got := itemBodies(w.recall(m, scope, memory.Query{})); !sameStrings(got, []string{"6", "4", "3", "2", "1"}) {
		w.t.Fatalf("second recall %q", got)
	}
	if n := counting.read.Load(); n != 4 {
		w.t.Fatalf("second recall read %d records, want only the 4 new ones", n)
	}
	counting.read.Store(0)
	w.recall(m, scope, memory.Query{})
	if n := counting.read.Load(); n != 0 {
		w.t.Fatalf("a recall with nothing new read %d records", n)
	}
}

func conversationMemoryIsolation(w *conversationWorld) {
	a, b := w.mem(memory.Config{}), w.mem(memory.Config{})
	conv := w.conv()
	w.remember(a, memory.Scope{Conversation: conv}, "in a")
	if got := w.recall(b, memory.Scope{Conversation: conv}, memory.Query{}); len(got) != 0 {
		w.t.Fatalf("topic b recalled %q", itemBodies(got))
	}
	// Two namespaces on one topic keep their named items apart.
	x := memory.New(w.client, memory.Config{Topic: a.Topic(), Namespace: "x"})
	y := memory.New(w.client, memory.Config{Topic: a.Topic(), Namespace: "y"})
	if err := x.SetNamed(w.ctx, "k", []byte("from x")); err != nil {
		w.t.Fatal(err)
	}
	if _, ok, err := y.Named(w.ctx, "k"); err != nil || ok {
		w.t.Fatalf("namespace y sees x's key (%v, %v)", ok, err)
	}
	if v, ok, err := x.Named(w.ctx, "k"); err != nil || !ok || string(v) != "from x" {
		w.t.Fatalf("namespace x reads %q, %v, %v", v, ok, err)
	}
	if got := memory.New(w.client, memory.Config{}).Topic(); got != runtime.TopicAudit {
		w.t.Fatalf("default memory topic %q", got)
	}
}

// conversationMemoryWire reads a remembered record back raw: the reference's
// record encoding, keyed by the conversation, with provenance and the
// namespace header.
func conversationMemoryWire(w *conversationWorld) {
	m := w.mem(memory.Config{Namespace: "notes"})
	conv := w.conv()
	id, err := m.Remember(w.ctx, memory.Scope{Conversation: conv, Agent: "planner", User: "u1"}, memory.Summary, []byte{0, 1, 200})
	if err != nil {
		w.t.Fatal(err)
	}
	var rec *runtime.Incoming
	n, _ := w.tr.Partitions(w.ctx, m.Topic())
	for p := range n {
		recs, err := w.tr.ReadRange(w.ctx, m.Topic(), p, 0, 10)
		if err != nil {
			w.t.Fatal(err)
		}
		if len(recs) > 0 {
			rec = &recs[0]
		}
	}
	if rec == nil {
		w.t.Fatal("no memory record on the topic")
	}
	want, _ := (&wire.MemoryRecord{Op: wire.MemoryItem, ID: id.String(), Kind: "summary", Body: []byte{0, 1, 200}}).Marshal()
	if !bytes.Equal(rec.Payload, want) {
		w.t.Fatalf("payload %x, want %x", rec.Payload, want)
	}
	prov, err := wire.DecodeProvenance(rec.Headers)
	if err != nil || prov.Conversation != conv || prov.Agent != "planner" || prov.IdempotencyKey != id.String() {
		w.t.Fatalf("provenance %+v, %v", prov, err)
	}
	for key, want := range map[string]string{memory.HeaderNamespace: "notes", memory.HeaderUser: "u1"} {
		v, ok := rec.Headers.Get(key)
		if !ok || string(v.Data) != want {
			w.t.Fatalf("header %s = %q (%v), want %q", key, v.Data, ok, want)
		}
	}
}

// handled decodes a freshly published record of conv into a message and
// a test handler context.
func (w *conversationWorld) handled(topic string, conv wire.ID) *runtime.Ctx {
	pos := w.envelope(topic, conv, "user", "what is the weather")
	recs, err := w.tr.ReadRange(w.ctx, topic, pos.Partition, pos.Offset, 1)
	if err != nil || len(recs) != 1 {
		w.t.Fatalf("read back: %v", err)
	}
	msg, err := runtime.DecodeRecord(topic, &recs[0], 0)
	if err != nil {
		w.t.Fatal(err)
	}
	return lasertest.NewCtx(w.ctx, w.client, msg, "bot", "")
}

func conversationRememberingSuccess(w *conversationWorld) {
	m := w.mem(memory.Config{})
	in := w.topic("in", 2)
	conv := w.conv()
	fail := errors.New("model unavailable")
	var calls int
	h := memory.Remembering(runtime.HandlerFunc(func(c *runtime.Ctx) error {
		calls++
		if calls == 1 {
			return fail
		}
		return nil
	}), m, memory.Message)
	c := w.handled(in, conv)
	if err := h.Handle(c); !errors.Is(err, fail) {
		w.t.Fatalf("a failed handler returned %v", err)
	}
	if got := w.recall(m, memory.Scope{Conversation: conv}, memory.Query{}); len(got) != 0 {
		w.t.Fatalf("a failed handling was remembered: %q", itemBodies(got))
	}
	if err := h.Handle(c); err != nil {
		w.t.Fatal(err)
	}
	items := w.recall(m, memory.Scope{Conversation: conv}, memory.Query{})
	if len(items) != 1 || !bytes.Equal(items[0].Body, c.Message().Payload) || items[0].Kind != memory.Message || items[0].Agent != "user" {
		w.t.Fatalf("remembered %+v, want the encoded envelope as a message from user", items)
	}
}

// syncBuffer is a log sink safe for the handler's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func conversationRememberingFailure(w *conversationWorld) {
	var logs syncBuffer
	missing := "conv-missing-" + w.conv().String()
	m := memory.New(w.client, memory.Config{Topic: missing, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	in := w.topic("in", 1)
	h := memory.Remembering(runtime.HandlerFunc(func(*runtime.Ctx) error { return nil }), m, memory.Message)
	if err := h.Handle(w.handled(in, w.conv())); err != nil {
		w.t.Fatalf("a failed memory write failed the handler: %v", err)
	}
	if !bytes.Contains([]byte(logs.String()), []byte("remembering a handled message failed")) {
		w.t.Fatalf("no warning logged: %q", logs.String())
	}
}
