package featuretest

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/memory"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// assemble reads conv over topics under policy.
func (w *conversationWorld) assemble(conv wire.ID, opts conversation.Options) conversation.History {
	w.t.Helper()
	h, err := conversation.Assemble(w.ctx, w.tr, conv, opts)
	if err != nil {
		w.t.Fatal(err)
	}
	return h
}

// all keeps every record of the window.
var all = conversation.LastN(math.MaxInt)

// conversationOrder interleaves a conversation's turns over two topics and
// four partitions (with other conversations in between, and a batch whose
// records share a broker timestamp) and checks that the assembled order is
// the rule applied to the timestamps the broker stamped.
func conversationOrder(w *conversationWorld) {
	cmds, resps := w.topic("cmds", 4), w.topic("resps", 4)
	conv, other := w.conv(), w.conv()
	type turn struct {
		topic int
		pos   runtime.Position
		body  string
	}
	var turns []turn
	for i := range 4 {
		turns = append(turns, turn{0, w.say(cmds, conv, "user", fmt.Sprintf("ask %d", i)), fmt.Sprintf("ask %d", i)})
		w.say(cmds, other, "user", "noise")
		turns = append(turns, turn{1, w.say(resps, conv, "bot", fmt.Sprintf("answer %d", i)), fmt.Sprintf("answer %d", i)})
	}
	// One batch keyed by the conversation: one partition, one broker
	// stamp on servers that stamp a batch at once.
	var batch []runtime.Outgoing
	for i := range 3 {
		prov := wire.Provenance{Conversation: conv, Agent: "bot"}
		headers, _ := prov.Headers()
		batch = append(batch, runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: fmt.Appendf(nil, "batch %d", i)})
	}
	for i, p := range w.raw(resps, batch...) {
		turns = append(turns, turn{1, p, fmt.Sprintf("batch %d", i)})
	}

	// The expectation: read each turn's broker timestamp back and sort by
	// (timestamp, topic index, partition, offset).
	stamp := func(tr turn) uint64 {
		name := []string{cmds, resps}[tr.topic]
		recs, err := w.tr.ReadRange(w.ctx, name, tr.pos.Partition, tr.pos.Offset, 1)
		if err != nil || len(recs) != 1 {
			w.t.Fatalf("read back %v: %v", tr.pos, err)
		}
		return recs[0].Timestamp
	}
	stamps := make(map[string]uint64)
	for _, tr := range turns {
		stamps[tr.body] = stamp(tr)
	}
	slices.SortFunc(turns, func(a, b turn) int {
		return cmp.Or(cmp.Compare(stamps[a.body], stamps[b.body]), cmp.Compare(a.topic, b.topic),
			cmp.Compare(a.pos.Partition, b.pos.Partition), cmp.Compare(a.pos.Offset, b.pos.Offset))
	})
	var want []string
	for _, tr := range turns {
		want = append(want, tr.body)
	}
	got := bodies(w.assemble(conv, conversation.Options{Topics: []string{cmds, resps}, Policy: all}))
	if !sameStrings(got, want) {
		w.t.Fatalf("assembled %q\nwant %q", got, want)
	}
	// The published turns were sequential, so with distinct stamps the
	// asks and answers alternate in publish order.
	if got[0] != "ask 0" || got[1] != "answer 0" && stamps["answer 0"] != stamps["ask 0"] {
		w.t.Fatalf("first turns %q", got[:2])
	}
}

// conversationScope checks that only the conversation's records are kept,
// plain and AGDX alike.
func conversationScope(w *conversationWorld) {
	topic := w.topic("scope", 3)
	conv, other := w.conv(), w.conv()
	w.say(topic, conv, "user", "plain 1")
	w.envelope(topic, other, "bot", "elsewhere")
	w.envelope(topic, conv, "bot", "enveloped 2")
	w.say(topic, other, "user", "elsewhere too")
	w.say(topic, conv, "user", "plain 3")
	h := w.assemble(conv, conversation.Options{Topics: []string{topic}})
	if got := bodies(h); !sameStrings(got, []string{"plain 1", "enveloped 2", "plain 3"}) {
		w.t.Fatalf("assembled %q", got)
	}
	if h[1].Envelope == nil || h[1].Provenance.Agent != "bot" || h[0].Envelope != nil {
		w.t.Fatalf("decoded shapes: %+v / %+v", h[0], h[1])
	}
}

// conversationSubconversations checks the root-or-parent match.
func conversationSubconversations(w *conversationWorld) {
	topic := w.topic("sub", 2)
	conv, child, grandchild, unrelated := w.conv(), w.conv(), w.conv(), w.conv()
	w.say(topic, conv, "planner", "root turn")
	w.plain(topic, wire.Provenance{Conversation: child, ParentConversation: &conv, RootConversation: &conv, Agent: "worker"}, "child turn")
	w.plain(topic, wire.Provenance{Conversation: grandchild, ParentConversation: &child, RootConversation: &conv, Agent: "worker"}, "grandchild turn")
	w.plain(topic, wire.Provenance{Conversation: unrelated, ParentConversation: &child}, "parent is the child")
	w.plain(topic, wire.Provenance{Conversation: w.conv(), ParentConversation: &conv}, "parent only")
	w.plain(topic, wire.Provenance{Conversation: w.conv(), RootConversation: &unrelated}, "other root")

	own := bodies(w.assemble(conv, conversation.Options{Topics: []string{topic}}))
	if !sameStrings(own, []string{"root turn"}) {
		w.t.Fatalf("without sub-conversations: %q", own)
	}
	across := w.assemble(conv, conversation.Options{Topics: []string{topic}, AcrossSubconversations: true})
	got := bodies(across)
	slices.Sort(got)
	if !sameStrings(got, []string{"child turn", "grandchild turn", "parent only", "root turn"}) {
		w.t.Fatalf("across sub-conversations: %q", got)
	}
}

// conversationUndecodable publishes records that do not decode between good
// ones; assembly skips them without failing.
func conversationUndecodable(w *conversationWorld) {
	topic := w.topic("bad", 1)
	conv := w.conv()
	w.say(topic, conv, "user", "good 1")
	key := wire.PartitionKey(conv)
	w.raw(topic,
		// An AGDX record whose payload is not an envelope.
		runtime.Outgoing{Key: key, Headers: wire.Headers{{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(wire.AgentOpVersion)}}, Payload: []byte("not cbor")},
		// A plain record without a conversation header.
		runtime.Outgoing{Key: key, Headers: wire.Headers{{Key: wire.HeaderAgentID, Value: wire.StringValue("user")}}, Payload: []byte("no conversation")},
		// A plain record with a malformed fence.
		runtime.Outgoing{Key: key, Headers: wire.Headers{{Key: wire.HeaderConversationID, Value: wire.StringValue(conv.String())}, {Key: wire.HeaderFence, Value: wire.StringValue("x")}}, Payload: []byte("bad fence")},
	)
	w.envelope(topic, conv, "bot", "good 2")
	if got := bodies(w.assemble(conv, conversation.Options{Topics: []string{topic}})); !sameStrings(got, []string{"good 1", "good 2"}) {
		w.t.Fatalf("assembled %q", got)
	}
}

// conversationDefaultPolicy checks that the zero Options keep the last 50.
func conversationDefaultPolicy(w *conversationWorld) {
	topic := w.topic("last50", 2)
	conv := w.conv()
	for i := range 60 {
		w.say(topic, conv, "user", fmt.Sprint(i))
	}
	got := bodies(w.assemble(conv, conversation.Options{Topics: []string{topic}}))
	if len(got) != 50 || got[0] != "10" || got[49] != "59" {
		w.t.Fatalf("kept %d records, %q..%q", len(got), got[0], got[len(got)-1])
	}
}

// conversationPolicies applies the role filter, token budget and a chain to a
// conversation read from the log.
func conversationPolicies(w *conversationWorld) {
	topic := w.topic("policies", 2)
	conv := w.conv()
	w.say(topic, conv, "planner", "plan the trip, in detail please")
	w.say(topic, conv, "executor", "booked")
	w.say(topic, conv, "planner", "now the hotel")
	w.say(topic, conv, "critic", "too expensive")
	opts := func(p conversation.Policy) conversation.Options {
		return conversation.Options{Topics: []string{topic}, Policy: p}
	}
	if got := bodies(w.assemble(conv, opts(conversation.ByAgent{"planner"}))); !sameStrings(got, []string{"plan the trip, in detail please", "now the hotel"}) {
		w.t.Fatalf("by agent: %q", got)
	}
	// Each record costs ceil(payload/4) tokens: 8, 2, 4, 4.
	if got := bodies(w.assemble(conv, opts(conversation.TokenBudget{Max: 10}))); !sameStrings(got, []string{"booked", "now the hotel", "too expensive"}) {
		w.t.Fatalf("token budget: %q", got)
	}
	if got := bodies(w.assemble(conv, opts(conversation.TokenBudget{Max: 1}))); !sameStrings(got, []string{"too expensive"}) {
		w.t.Fatalf("token budget keeps one: %q", got)
	}
	chain := conversation.Chain{conversation.ByAgent{"planner", "executor"}, conversation.LastN(2)}
	if got := bodies(w.assemble(conv, opts(chain))); !sameStrings(got, []string{"booked", "now the hotel"}) {
		w.t.Fatalf("chain: %q", got)
	}
}

// conversationNoGroup commits a group past everything, then assembles: the
// whole conversation is still read, and the group's offset is unchanged.
func conversationNoGroup(w *conversationWorld) {
	topic := w.topic("nogroup", 1)
	conv := w.conv()
	var last runtime.Position
	for i := range 5 {
		last = w.say(topic, conv, "user", fmt.Sprint(i))
	}
	group := "conv-group"
	sub, err := w.tr.Join(w.ctx, topic, group)
	if err != nil {
		w.t.Fatal(err)
	}
	defer func() { _ = sub.Leave(w.ctx) }()
	if err := sub.Commit(w.ctx, last.Partition, last.Offset); err != nil {
		w.t.Fatal(err)
	}
	if got := w.assemble(conv, conversation.Options{Topics: []string{topic}}); len(got) != 5 {
		w.t.Fatalf("assembled %d records after the group committed past them, want 5", len(got))
	}
	var f conversation.Fold[int]
	f.Topics, f.Step = []string{topic}, func(n int, _ *runtime.Message) int { return n + 1 }
	if n, err := f.Load(w.ctx, w.tr, conv, conversation.Full()); err != nil || n != 5 {
		w.t.Fatalf("fold after the group committed: %d, %v", n, err)
	}
	off, ok, err := w.tr.StoredOffset(w.ctx, topic, group, last.Partition)
	if err != nil || !ok || off != last.Offset {
		w.t.Fatalf("group offset %d (stored %v, %v), want %d", off, ok, err, last.Offset)
	}
	// The group still has nothing left to deliver.
	if recs, err := sub.Poll(w.ctx, 10); err != nil || len(recs) != 0 {
		w.t.Fatalf("group polled %d records (%v) after the reads", len(recs), err)
	}

	// Memory too reads from offset 0 past a group's committed offset.
	mem := memory.New(w.client, memory.Config{Topic: w.topic("nogroupmem", 1)})
	w.remember(mem, memory.Scope{Conversation: conv}, "one")
	w.remember(mem, memory.Scope{Conversation: conv}, "two")
	msub, err := w.tr.Join(w.ctx, mem.Topic(), group)
	if err != nil {
		w.t.Fatal(err)
	}
	defer func() { _ = msub.Leave(w.ctx) }()
	if err := msub.Commit(w.ctx, 0, 1); err != nil {
		w.t.Fatal(err)
	}
	if got := w.recall(mem, memory.Scope{Conversation: conv}, memory.Query{}); len(got) != 2 {
		w.t.Fatalf("memory recalled %d items after the group committed past them, want 2", len(got))
	}
	if off, ok, err := w.tr.StoredOffset(w.ctx, mem.Topic(), group, 0); err != nil || !ok || off != 1 {
		w.t.Fatalf("memory topic's group offset %d (stored %v, %v), want 1", off, ok, err)
	}
}

// conversationFromOffsets starts a partition at a given offset.
func conversationFromOffsets(w *conversationWorld) {
	topic := w.topic("from", 1)
	conv := w.conv()
	var pos []runtime.Position
	for i := range 6 {
		pos = append(pos, w.say(topic, conv, "user", fmt.Sprint(i)))
	}
	got := bodies(w.assemble(conv, conversation.Options{Topics: []string{topic}, FromOffsets: map[uint32]uint64{pos[0].Partition: pos[4].Offset}}))
	if !sameStrings(got, []string{"4", "5"}) {
		w.t.Fatalf("from offset %d: %q", pos[4].Offset, got)
	}
}

// conversationWindow fills one partition past the window: only the newest
// Window records are read, the oldest dropped.
func conversationWindow(w *conversationWorld) {
	topic := w.topic("window", 1)
	conv := w.conv()
	prov := wire.Provenance{Conversation: conv, Agent: "user"}
	headers, _ := prov.Headers()
	const extra = 25
	total := conversation.Window + extra
	for start := 0; start < total; start += 1000 {
		batch := make([]runtime.Outgoing, 0, 1000)
		for i := start; i < min(total, start+1000); i++ {
			batch = append(batch, runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: fmt.Append(nil, i)})
		}
		w.raw(topic, batch...)
	}
	h := w.assemble(conv, conversation.Options{Topics: []string{topic}, Policy: all})
	if len(h) != conversation.Window || string(h[0].Body()) != fmt.Sprint(extra) || string(h[len(h)-1].Body()) != fmt.Sprint(total-1) {
		w.t.Fatalf("window of %d records from %q to %q", len(h), h[0].Body(), h[len(h)-1].Body())
	}
}
