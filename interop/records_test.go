package interop

import (
	"context"
	"encoding/hex"
	"maps"
	"testing"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// The records one layer above the envelope (replies, headers, capsules,
// memory, evidence, claim checks), each round-tripped through the
// reference's own code. Every test here backs a row of the records table in
// docs/interop.md.

// An unsigned Go agent answers a reference contract (an AGDX command) with
// an AGDX response, as a reference agent does, not with a plain message.
func TestRecordsInteropUnsignedAgentAnswersAGDXResponse(t *testing.T) {
	r := newRig(t)
	r.start(t, runtime.AgentConfig{ID: "go-unsigned", Listen: goCommands, Respond: responses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			return c.Respond(append([]byte("echo: "), c.Message().Body()...))
		})})

	res := r.py.call(r.ctx, t, "contract", map[string]any{
		"source": "py-orchestrator", "agent": "go-unsigned", "inbox": goCommands, "reply_on": responses, "body": "hello",
	})
	if res["state"] != "Completed" || str(res, "body") != "echo: hello" {
		t.Fatalf("contract ended %v with %q, want Completed with the Go agent's echo", res["state"], str(res, "body"))
	}
	env, _ := res["envelope"].(map[string]any)
	if env == nil {
		t.Fatalf("the reference read the Go answer as a plain message; want an AGDX response")
	}
	if kind := str(env, "kind"); kind != "response" {
		t.Fatalf("the reference read an AGDX %q, want a response (envelope %v)", kind, env)
	}
	if str(env, "source") != "go-unsigned" || str(env, "target") != "py-orchestrator" {
		t.Errorf("the response is from %q to %q, want go-unsigned to py-orchestrator", str(env, "source"), str(env, "target"))
	}
}

// headerSet is a record's string headers as the reference's replay shows
// them (its Python API surfaces the string-typed ones).
func headerSet(rec map[string]any) map[string]string {
	out := map[string]string{}
	h, _ := rec["headers"].(map[string]any)
	for k, v := range h {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// A Go record carries the routing headers a reference record carries
// (gen_ai.conversation.id as the conversation's ULID text, gen_ai.agent.id,
// agdx.to), and each side reads the other's record into the same
// conversation and sender, including a laser-go record of the older form
// (a Uint128 conversation header and no agent id).
func TestRecordsInteropHeadersWrittenAsTheReferenceWrites(t *testing.T) {
	r := newRig(t)
	conv := conversation.Derive(r.ep.stream + "/headers")
	goCmd, err := r.client.SendCommand(r.ctx, runtime.Command{Topic: sessions, From: "go-agent", Target: "py-agent", Body: []byte("go command")},
		runtime.WithConversation(conv))
	if err != nil {
		t.Fatal(err)
	}
	goEvent, err := r.client.Emit(r.ctx, sessions, "go-agent", []byte("go event"), runtime.WithConversation(conv))
	if err != nil {
		t.Fatal(err)
	}
	pyCmd := r.py.call(r.ctx, t, "publish", map[string]any{"topic": sessions, "source": "py-agent", "conversation": conv.String(),
		"target": "go-agent", "body": "py command"})
	pyEvent := r.py.call(r.ctx, t, "publish", map[string]any{"topic": sessions, "source": "py-agent", "conversation": conv.String(),
		"kind": "event", "body": "py event"})
	// The older laser-go form, still on logs written before this change.
	old := &wire.Envelope{Kind: wire.KindEvent, Record: ptr(wire.IDFromUint128(0x01903c1faa000000, 9)), Conversation: conv, Source: "go-old", Body: []byte("old event")}
	payload, err := old.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	oldHeaders := wire.Headers{
		{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(wire.AgentOpVersion)},
		{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(wire.ContentRaw))},
		{Key: wire.HeaderConversationID, Value: wire.Uint128Value(conv)},
	}
	if _, err := r.client.Transport().Publish(r.ctx, sessions, runtime.Outgoing{Key: wire.PartitionKey(conv), Headers: oldHeaders, Payload: payload}); err != nil {
		t.Fatal(err)
	}

	// The reference reads every record's headers and envelope.
	byRecord := map[wire.ID]map[string]any{}
	for _, rec := range r.py.call(r.ctx, t, "read_headers", map[string]any{"topic": sessions})["records"].([]any) {
		rec := rec.(map[string]any)
		byRecord[mustID(t, str(rec, "envelope", "record"))] = rec
	}
	want := map[string]map[string]string{
		recordOf(goCmd).String():                   {wire.HeaderConversationID: conv.String(), wire.HeaderAgentID: "go-agent", wire.HeaderTarget: "py-agent"},
		recordOf(goEvent).String():                 {wire.HeaderConversationID: conv.String(), wire.HeaderAgentID: "go-agent", wire.HeaderTarget: wire.BroadcastTarget},
		mustID(t, str(pyCmd, "record")).String():   {wire.HeaderConversationID: conv.String(), wire.HeaderAgentID: "py-agent", wire.HeaderTarget: "go-agent"},
		mustID(t, str(pyEvent, "record")).String(): {wire.HeaderConversationID: conv.String(), wire.HeaderAgentID: "py-agent", wire.HeaderTarget: wire.BroadcastTarget},
	}
	for id, headers := range want {
		rec, ok := byRecord[mustID(t, id)]
		if !ok {
			t.Fatalf("the reference did not read record %s", id)
		}
		if got := headerSet(rec); !maps.Equal(got, headers) {
			t.Errorf("record %s from %s: the reference read string headers %v, want %v", id, str(rec, "envelope", "source"), got, headers)
		}
	}
	if rec, ok := byRecord[*old.Record]; !ok || str(rec, "envelope", "source") != "go-old" {
		t.Errorf("the reference did not read the older laser-go record: %v", rec)
	}

	// laser-go reads all five into the conversation, each from its sender.
	history, err := conversation.Assemble(r.ctx, r.client.Transport(), conv, conversation.Options{Topics: []string{sessions}})
	if err != nil {
		t.Fatal(err)
	}
	senders := map[string]string{}
	for _, m := range history {
		senders[recordOf(m.Envelope).String()] = string(m.Envelope.Source)
	}
	for id, headers := range want {
		if senders[id] != headers[wire.HeaderAgentID] {
			t.Errorf("Go assembled record %s from %q, want %q", id, senders[id], headers[wire.HeaderAgentID])
		}
	}
	if senders[old.Record.String()] != "go-old" {
		t.Errorf("Go did not assemble the older laser-go record (assembled %v)", senders)
	}
}

func ptr[T any](v T) *T { return &v }

// mustID reads an id the reference printed: its ULID text or 32 hex digits.
func mustID(t *testing.T, s string) wire.ID {
	t.Helper()
	id, err := wire.ParseID(s)
	if err != nil {
		return idFromHex(t, s)
	}
	return id
}

func idFromHex(t *testing.T, s string) wire.ID {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 16 {
		t.Fatalf("%q is neither a ULID nor 16 bytes of hex", s)
	}
	return wire.ID(b)
}

// agdxHeaders are the headers of a record that claims to be AGDX in
// conversation conv; with a payload that is not an envelope it cannot be
// decoded by either side.
func agdxHeaders(conv wire.ID) wire.Headers {
	return wire.Headers{
		{Key: wire.HeaderAgentVersion, Value: wire.Uint32Value(wire.AgentOpVersion)},
		{Key: wire.HeaderContentType, Value: wire.Uint8Value(uint8(wire.ContentRaw))},
		{Key: wire.HeaderConversationID, Value: wire.StringValue(conv.String())},
	}
}

// The capsule of a record neither side can decode keeps the record's
// conversation (its gen_ai.conversation.id header), so a Go agent's capsule
// and a reference agent's capsule of the same conversation land in one
// partition of agent.dlq, and each side reads the other's capsule as that
// conversation's.
func TestRecordsInteropUndecodableCapsuleKeepsConversation(t *testing.T) {
	r := newRig(t)
	conv := conversation.Derive(r.ep.stream + "/undecodable")
	parked := make(chan runtime.DeadLetter, 1)
	r.start(t, runtime.AgentConfig{ID: "go-strict", Listen: goCommands, Respond: responses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error { return nil }),
		Tuning:  runtime.Tuning{DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) { parked <- dl }}})
	r.py.call(r.ctx, t, "serve", map[string]any{"agent": "py-strict", "listen": pyCommands, "respond": responses, "behaviour": "record"})

	if _, err := r.client.Transport().Publish(r.ctx, goCommands, runtime.Outgoing{Key: wire.PartitionKey(conv), Headers: agdxHeaders(conv), Payload: []byte("not cbor for go")}); err != nil {
		t.Fatal(err)
	}
	dl := receive(r.ctx, t, parked, "Go dead letter of the undecodable record")
	if dl.PublishErr != nil || dl.Capsule.Reason != wire.ReasonDecodeFailed {
		t.Fatalf("Go parked %+v (publish %v), want a decode_failed capsule", dl.Capsule, dl.PublishErr)
	}
	if _, err := r.client.Transport().Publish(r.ctx, pyCommands, runtime.Outgoing{Key: wire.PartitionKey(conv), Headers: agdxHeaders(conv), Payload: []byte("not cbor for python")}); err != nil {
		t.Fatal(err)
	}
	if ev := r.py.event(r.ctx, t, "dead_letter", func(ev map[string]any) bool { return ev["agent"] == "py-strict" }); ev["publish_error"] != nil {
		t.Fatalf("the reference could not publish its capsule: %v", ev["publish_error"])
	}

	// The reference reads both capsules as the conversation's, in one partition.
	partitions := map[string]float64{}
	for _, c := range r.py.call(r.ctx, t, "read_dlq", nil)["capsules"].([]any) {
		c := c.(map[string]any)
		payload, _ := hex.DecodeString(str(c, "capsule", "payload"))
		if got := str(c, "headers", wire.HeaderConversationID); got != conv.String() {
			t.Errorf("the reference read the capsule of %q under conversation %q, want %s", payload, got, conv)
		}
		p, _ := c["partition"].(float64)
		partitions[string(payload)] = p
	}
	if len(partitions) != 2 || partitions["not cbor for go"] != partitions["not cbor for python"] {
		t.Errorf("capsules by payload and partition %v, want both in the conversation's one partition", partitions)
	}
	if dl.Position.Partition != uint32(partitions["not cbor for python"]) {
		t.Errorf("Go's capsule is in partition %d, the reference's in %v", dl.Position.Partition, partitions["not cbor for python"])
	}

	// laser-go reads both capsules' provenance as the conversation's.
	seen := 0
	if _, err := logscan.Topic(r.ctx, r.client.Transport(), runtime.TopicDLQ, nil, func(rec *runtime.Incoming) {
		prov, err := wire.DecodeProvenance(rec.Headers)
		if err != nil {
			t.Errorf("capsule at %d:%d: provenance: %v", rec.Partition, rec.Offset, err)
			return
		}
		if prov.Conversation != conv {
			t.Errorf("Go read the capsule at %d:%d under conversation %s, want %s", rec.Partition, rec.Offset, prov.Conversation, conv)
		}
		seen++
	}); err != nil {
		t.Fatal(err)
	}
	if seen != 2 {
		t.Errorf("Go read %d capsules, want 2", seen)
	}
}
