package interop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lasergo/laser/blob"
	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/govern"
	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/memory"
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
	goCmd, err := r.client.Send(r.ctx, runtime.Out{Topic: sessions, From: "go-agent", Target: "py-agent", Body: []byte("go command")},
		runtime.WithConversation(conv))
	if err != nil {
		t.Fatal(err)
	}
	goEvent, err := r.client.Send(r.ctx, runtime.Out{Kind: wire.KindEvent, Topic: sessions, From: "go-agent", Body: []byte("go event")}, runtime.WithConversation(conv))
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

// referenceMemoryTopic is the topic the reference SDK 0.8.2's
// Laser.memory(namespace) keeps memory on.
const referenceMemoryTopic = "agent.memory"

// pyRecall returns the bodies of the items the reference's folded recall of
// namespace ns returns, by memory id.
func (r *rig) pyRecall(t *testing.T, ns string, conv wire.ID) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, it := range r.py.call(r.ctx, t, "memory_recall", map[string]any{"namespace": ns, "conversation": conv.String()})["items"].([]any) {
		it := it.(map[string]any)
		out[str(it, "memory_id")] = str(it, "body")
	}
	return out
}

// goRecall returns the bodies of the items a Store's recall returns, by id.
func goRecall(ctx context.Context, t *testing.T, mem *memory.Store, conv wire.ID) map[string]string {
	t.Helper()
	items, err := mem.Recall(ctx, memory.Scope{Conversation: conv}, memory.Query{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, it := range items {
		out[it.ID.String()] = string(it.Body)
	}
	return out
}

// Memory items and tombstones cross both ways on one topic: the reference
// recalls a Go item, a reference agent's forget (a record without the
// agdx.mem.ns header) takes the item out of Go's recall, and a Go forget
// takes a reference item out of the reference's recall.
func TestRecordsInteropMemoryForgetCrossesBothWays(t *testing.T) {
	r := newRig(t)
	const ns = "shared-notes"
	conv := conversation.Derive(r.ep.stream + "/memory")
	// The reference SDK 0.8.2 keeps memory on agent.memory (one partition,
	// which it creates) and stamps a namespace scoped to the stream.
	if err := r.client.Transport().EnsureTopics(r.ctx, 1, referenceMemoryTopic); err != nil {
		t.Fatal(err)
	}
	mem := memory.New(r.client, memory.Config{Topic: referenceMemoryTopic, Namespace: "stream:" + r.ep.stream + "/" + ns})
	scope := memory.Scope{Conversation: conv, Agent: "go-agent"}
	keep, err := mem.Remember(r.ctx, scope, memory.Fact, []byte("the sky is blue"))
	if err != nil {
		t.Fatal(err)
	}
	gone, err := mem.Remember(r.ctx, scope, memory.Fact, []byte("the moon is cheese"))
	if err != nil {
		t.Fatal(err)
	}
	pyItem := str(r.py.call(r.ctx, t, "memory_remember", map[string]any{"namespace": ns, "conversation": conv.String(), "agent": "py-agent", "body": "water is wet"}), "memory_id")
	pyID := mustID(t, pyItem)

	want := map[string]string{keep.String(): "the sky is blue", gone.String(): "the moon is cheese", pyID.String(): "water is wet"}
	if got := goRecall(r.ctx, t, mem, conv); !maps.Equal(got, want) {
		t.Fatalf("Go recalled %v, want %v", got, want)
	}
	if got := r.pyRecall(t, ns, conv); !maps.Equal(normalizeIDs(t, got), want) {
		t.Fatalf("the reference recalled %v, want %v", got, want)
	}

	t.Run("python forgets, go no longer recalls", func(t *testing.T) {
		r.py.call(r.ctx, t, "memory_forget", map[string]any{"namespace": ns, "conversation": conv.String(), "agent": "py-agent", "memory_id": gone.String()})
		got := goRecall(r.ctx, t, mem, conv)
		if _, ok := got[gone.String()]; ok {
			t.Fatalf("Go still recalls %s after the reference forgot it: %v", gone, got)
		}
		if got[keep.String()] != "the sky is blue" {
			t.Fatalf("Go lost %s, which nobody forgot: %v", keep, got)
		}
	})
	t.Run("a forget without a namespace header, go no longer recalls", func(t *testing.T) {
		// The reference's Rust LogMemory writes forget and feedback without
		// agdx.mem.ns. The Python SDK stamps one, so the reference writes the
		// forget under another namespace and it is re-published as the Rust
		// SDK writes it: the same payload and provenance, no namespace.
		scratch := "stream:" + r.ep.stream + "/scratch"
		r.py.call(r.ctx, t, "memory_forget", map[string]any{"namespace": "scratch", "conversation": conv.String(), "agent": "py-agent", "memory_id": keep.String()})
		if got := goRecall(r.ctx, t, mem, conv); got[keep.String()] == "" {
			t.Fatalf("another namespace's forget took %s out of Go's recall: %v", keep, got)
		}
		var stripped []runtime.Outgoing
		if _, err := logscan.Topic(r.ctx, r.client.Transport(), referenceMemoryTopic, nil, func(rec *runtime.Incoming) {
			if v, ok := rec.Headers.Get(memory.HeaderNamespace); !ok || string(v.Data) != scratch {
				return
			}
			var h wire.Headers
			for k, v := range rec.Headers.All() {
				if k != memory.HeaderNamespace {
					h = append(h, wire.Header{Key: k, Value: v})
				}
			}
			stripped = append(stripped, runtime.Outgoing{Key: wire.PartitionKey(conv), Headers: h, Payload: slices.Clone(rec.Payload)})
		}); err != nil {
			t.Fatal(err)
		}
		if len(stripped) != 1 {
			t.Fatalf("found %d forget records of namespace %s, want the reference's one", len(stripped), scratch)
		}
		if _, err := r.client.Transport().Publish(r.ctx, referenceMemoryTopic, stripped...); err != nil {
			t.Fatal(err)
		}
		if got := goRecall(r.ctx, t, mem, conv); got[keep.String()] != "" {
			t.Fatalf("Go still recalls %s after a namespace-less forget of it: %v", keep, got)
		}
	})
	t.Run("go forgets, python no longer recalls", func(t *testing.T) {
		if err := mem.Forget(r.ctx, scope, pyID); err != nil {
			t.Fatal(err)
		}
		got := normalizeIDs(t, r.pyRecall(t, ns, conv))
		if want := map[string]string{keep.String(): "the sky is blue"}; !maps.Equal(got, want) {
			t.Fatalf("the reference recalled %v after both forgets, want %v", got, want)
		}
	})
}

// normalizeIDs re-keys a map by ids as laser-go prints them.
func normalizeIDs(t *testing.T, m map[string]string) map[string]string {
	t.Helper()
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[mustID(t, k).String()] = v
	}
	return out
}

// Governance decisions of both SDKs on one agent.audit: laser-go reads a
// reference agent's decisions (its PolicyEvidence layout, BLAKE3 digest,
// chained per conversation) and verifies them beside a laser-go gate's
// chain, reporting a changed or removed reference decision, and still
// reporting a cut laser-go tail; a reference decision re-encoded by
// laser-go decodes in the reference to the same digest.
func TestRecordsInteropGovernanceEvidenceVerifiedOverAMixedChain(t *testing.T) {
	r := newRig(t)
	conv := conversation.Derive(r.ep.stream + "/governed")
	r.py.call(r.ctx, t, "governed_emit", map[string]any{"topic": sessions, "source": "py-gov", "conversation": conv.String(),
		"bodies": []string{"one", "two", "three"}, "reason": "observed by the reference"})

	// Two laser-go gates: one writing its own layout (LaserGoLayout), one
	// the default, the reference's layout with laser-go's chain (producer,
	// seq) as extra fields.
	goKey := key(t, 0x44)
	allow := govern.GovernorFunc(func(context.Context, *govern.Action) (govern.Decision, error) {
		return govern.Decision{Verdict: govern.VerdictAllow, Reason: "allowed by Go", Policy: govern.PolicyRef{ID: "pack-7", Version: "3"}}, nil
	})
	for _, cfg := range []govern.Config{
		{RecordAllows: true, Producer: "go-gate", Agent: "go-gov", Key: goKey, LaserGoLayout: true},
		{RecordAllows: true, Producer: "go-ref-gate", Agent: "go-gov", Key: goKey},
	} {
		governed := runtime.NewClient(r.client.Transport(), runtime.ClientConfig{EffectGate: govern.NewGate(allow, cfg)})
		for _, body := range []string{"go one", "go two"} {
			if _, err := governed.Send(r.ctx, runtime.Out{Kind: wire.KindEvent, Topic: sessions, From: "go-agent", Body: []byte(body)}, runtime.WithConversation(conv)); err != nil {
				t.Fatal(err)
			}
		}
	}

	entries, err := govern.ReadAudit(r.ctx, r.client.Transport(), runtime.TopicAudit)
	if err != nil {
		t.Fatal(err)
	}
	var refs, ours, oursInReference []govern.Entry
	for _, e := range entries {
		switch {
		case e.Policy != nil && e.Evidence == nil:
			refs = append(refs, e)
		case e.Policy != nil:
			oursInReference = append(oursInReference, e)
			ours = append(ours, e)
		case e.Evidence != nil:
			ours = append(ours, e)
		default:
			t.Fatalf("a decision at %s decodes in neither layout: %v", e.At, e.Err)
		}
	}
	if len(refs) != 3 || len(ours) != 4 || len(oursInReference) != 2 {
		t.Fatalf("read %d reference decisions and %d laser-go ones (%d in the reference's layout), want 3 and 4 (2)", len(refs), len(ours), len(oursInReference))
	}
	for _, e := range refs {
		if p := e.Policy; p.Decision != "observe" || p.Source != "py-gov" || p.Conversation != conv.String() || p.Reason != "observed by the reference" {
			t.Fatalf("reference decision read as %+v", p)
		}
	}
	keys := verifying(t, "go-gov", goKey.Public())
	if f := govern.Verify(entries, govern.VerifyOptions{}); len(f) != 0 {
		t.Fatalf("the untouched mixed log has findings: %v", f)
	}
	t.Run("a changed reference decision is altered", func(t *testing.T) {
		changed := slices.Clone(entries)
		i := slices.IndexFunc(changed, func(e govern.Entry) bool { return e.Policy != nil && e.Policy.PreviousDigest != "" })
		p := *changed[i].Policy
		p.Reason = "rewritten"
		changed[i].Policy = &p
		f := govern.Verify(changed, govern.VerifyOptions{})
		if len(f) != 1 || f[0].Problem != govern.Altered || f[0].At != entries[i].At {
			t.Fatalf("findings %v, want the changed record altered", f)
		}
	})
	t.Run("a removed reference decision is reported at its successor", func(t *testing.T) {
		i := slices.IndexFunc(entries, func(e govern.Entry) bool { return e.Policy != nil && e.Policy.PreviousDigest != "" })
		cut := slices.Delete(slices.Clone(entries), i, i+1)
		f := govern.Verify(cut, govern.VerifyOptions{})
		if len(f) != 1 || f[0].Problem != govern.Removed || !strings.HasPrefix(f[0].Producer, "reference:py-gov/") {
			t.Fatalf("findings %v, want the successor of the removed record reported", f)
		}
	})
	t.Run("laser-go's chain keeps signer pinning and cut-tail detection", func(t *testing.T) {
		for _, producer := range []string{"go-gate", "go-ref-gate"} {
			f := govern.Verify(ours, govern.VerifyOptions{Keys: keys, Signers: map[string]string{producer: "go-gov"}, Expect: map[string]uint64{producer: 3}})
			if len(f) != 1 || f[0].Producer != producer || f[0].Problem != govern.Removed {
				t.Fatalf("findings %v, want only the cut tail (seq 3) of %s", f, producer)
			}
			f = govern.Verify(ours, govern.VerifyOptions{Keys: keys, Signers: map[string]string{producer: "someone-else"}})
			if len(f) == 0 || f[0].Producer != producer || f[0].Problem != govern.Unverified {
				t.Fatalf("findings %v, want %s refused for its pinned signer", f, producer)
			}
		}
		changed := slices.Clone(ours)
		i := slices.IndexFunc(changed, func(e govern.Entry) bool { return e.Policy != nil && e.Evidence.Seq == 2 })
		p := *changed[i].Policy
		p.Reason = "rewritten"
		changed[i].Policy = &p
		if f := govern.Verify(changed, govern.VerifyOptions{}); len(f) != 1 || f[0].Producer != "go-ref-gate" || f[0].Problem != govern.Altered {
			t.Fatalf("findings %v, want go-ref-gate's changed seq 2 altered", f)
		}
	})
	t.Run("the reference reads laser-go's default evidence, extra fields and all", func(t *testing.T) {
		var bodies []string
		for i, e := range oursInReference {
			if e.Policy.Producer != "go-ref-gate" || e.Policy.Seq != uint64(i+1) {
				t.Fatalf("laser-go's default evidence carries producer %q seq %d in its body, want go-ref-gate and %d", e.Policy.Producer, e.Policy.Seq, i+1)
			}
			bodies = append(bodies, hex.EncodeToString(e.Envelope.Body))
		}
		got := r.py.call(r.ctx, t, "decode_evidence", map[string]any{"bodies": bodies})["evidence"].([]any)
		for i, ev := range got {
			ev, want := ev.(map[string]any), oursInReference[i].Policy
			if str(ev, "receipt_digest") != want.ReceiptDigest || str(ev, "decision") != "allow" || str(ev, "reason") != "allowed by Go" ||
				str(ev, "source") != "go-agent" || str(ev, "conversation") != conv.String() || str(ev, "outcome") != "effected" {
				t.Errorf("the reference decoded %v, want %+v", ev, want)
			}
			if prev := str(ev, "previous_digest"); i == 1 && prev != oursInReference[0].Policy.ReceiptDigest {
				t.Errorf("the reference read previous_digest %q, want the first decision's %s", prev, oursInReference[0].Policy.ReceiptDigest)
			}
		}
	})
	t.Run("the reference decodes laser-go's encoding to the same digest", func(t *testing.T) {
		var bodies []string
		for _, e := range refs {
			digest, err := e.Policy.Digest()
			if err != nil || digest != e.Policy.ReceiptDigest {
				t.Fatalf("laser-go digests the reference record to %s (%v), the reference to %s", digest, err, e.Policy.ReceiptDigest)
			}
			b, err := e.Policy.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, hex.EncodeToString(b))
		}
		got := r.py.call(r.ctx, t, "decode_evidence", map[string]any{"bodies": bodies})["evidence"].([]any)
		for i, ev := range got {
			ev := ev.(map[string]any)
			if str(ev, "receipt_digest") != refs[i].Policy.ReceiptDigest || str(ev, "decision_id") != refs[i].Policy.DecisionID {
				t.Errorf("the reference decoded %v, want decision %s with digest %s", ev, refs[i].Policy.DecisionID, refs[i].Policy.ReceiptDigest)
			}
		}
	})
}

// Claim-checked bodies cross both ways through one store directory laid out
// as blob.Dir: a reference agent's claim_check emit resolves in Go, a Go
// Offload resolves in the reference's resolve_body, and a tampered body is
// refused by each.
func TestRecordsInteropClaimCheckedBodiesResolveBothWays(t *testing.T) {
	r := newRig(t)
	store := blob.Dir{Root: t.TempDir()}
	conv := conversation.Derive(r.ep.stream + "/blob")
	pyBody := strings.Repeat("python body ", 200) // 2,400 bytes
	goBody := strings.Repeat("go body ", 300)     // 2,400 bytes
	sent := r.py.call(r.ctx, t, "blob_emit", map[string]any{"topic": sessions, "source": "py-agent", "conversation": conv.String(),
		"body": pyBody, "dir": store.Root, "threshold": 1024})
	capsule, checked, err := blob.Offload(r.ctx, store, 1024, []byte(goBody))
	if err != nil || !checked {
		t.Fatalf("Offload: %v (checked %v)", err, checked)
	}
	goEnv, err := r.client.Send(r.ctx, runtime.Out{Kind: wire.KindEvent, Topic: sessions, From: "go-agent", Body: capsule}, runtime.WithConversation(conv), runtime.WithContentType(wire.ContentRef))
	if err != nil {
		t.Fatal(err)
	}

	history, err := conversation.Assemble(r.ctx, r.client.Transport(), conv, conversation.Options{Topics: []string{sessions}})
	if err != nil {
		t.Fatal(err)
	}
	var pyMsg *runtime.Message
	for _, m := range history {
		if recordOf(m.Envelope) == mustID(t, str(sent, "record")) {
			pyMsg = m
		}
	}
	if pyMsg == nil || !pyMsg.HasContentType || pyMsg.ContentType != wire.ContentRef {
		t.Fatalf("Go read the reference's record as %+v, want content type ref", pyMsg)
	}
	got, err := blob.Body(r.ctx, store, pyMsg)
	if err != nil || string(got) != pyBody {
		t.Fatalf("Go resolved the reference's capsule to %d bytes (%v), want its %d-byte body", len(got), err, len(pyBody))
	}

	resolved := func() map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, rec := range r.py.call(r.ctx, t, "blob_resolve", map[string]any{"topic": sessions, "dir": store.Root})["records"].([]any) {
			rec := rec.(map[string]any)
			out[mustID(t, str(rec, "record", "hex")).String()] = rec
		}
		return out
	}
	if rec := resolved()[recordOf(goEnv).String()]; str(rec, "body") != goBody {
		t.Fatalf("the reference resolved the Go capsule to %v, want the %d-byte body", rec, len(goBody))
	}

	// Swap both stored bodies for others of the same size.
	for _, body := range []string{pyBody, goBody} {
		sum := sha256.Sum256([]byte(body))
		forged := strings.Repeat("z", len(body))
		if err := os.WriteFile(filepath.Join(store.Root, hex.EncodeToString(sum[:])), []byte(forged), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := blob.Body(r.ctx, store, pyMsg); !errors.Is(err, blob.ErrIntegrity) {
		t.Errorf("Go resolved a tampered reference body: %v, want ErrIntegrity", err)
	}
	if rec := resolved()[recordOf(goEnv).String()]; rec["error"] == nil || rec["body"] != nil {
		t.Errorf("the reference resolved a tampered Go body: %v", rec)
	}
}
