package interop

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/conversation"
	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// The topics both SDKs meet on. laser-go's agents listen on agent.commands
// and everyone answers on agent.responses (laser-go's defaults, which the
// reference agents are told); the reference agents listen on a topic of
// their own, so that each side consumes only the commands meant for it.
// Capsules go to agent.dlq and cards to agent.registry on the same stream
// (the reference's DLQ is told so), and turns of a conversation to
// agent.sessions, the reference's default topic for context assembly.
const (
	goCommands  = runtime.TopicCommands
	responses   = runtime.TopicResponses
	pyCommands  = "py.commands"
	sessions    = "agent.sessions"
	suiteBudget = 2 * time.Minute
)

// rig is one test's log, a laser-go client on it and one reference process.
type rig struct {
	ctx    context.Context
	ep     endpoint
	client *runtime.Client
	py     *peer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	python := pythonWithSDK(t)
	// Not t.Context(): it ends before the cleanups run, and the agents must
	// still be running when their Shutdown drains them. The cancel is
	// registered first, so it runs after the agents stopped.
	ctx, cancel := context.WithTimeout(context.Background(), suiteBudget)
	t.Cleanup(cancel)
	ep := server(t)
	client := dial(ctx, t, ep)
	// The reference SDK cannot create topics on a real 0.9 server (it sends
	// an option only LaserData's server reads), so laser-go creates them all.
	if err := client.Bootstrap(ctx, 2, pyCommands, sessions); err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	return &rig{ctx: ctx, ep: ep, client: client, py: startPeer(ctx, t, python, ep.pyConn, ep.stream)}
}

// start runs a laser-go agent until the test ends.
func (r *rig) start(t *testing.T, cfg runtime.AgentConfig) {
	t.Helper()
	agent, err := r.client.NewAgent(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := agent.Start(r.ctx)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("agent %s stopped: %v", cfg.ID, err)
		}
	})
	if err := h.Ready(r.ctx); err != nil {
		t.Fatalf("agent %s: %v", cfg.ID, err)
	}
}

func receive[T any](ctx context.Context, t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("no %s: %v", what, ctx.Err())
		var zero T
		return zero
	}
}

// str reads a string field of a JSON object the reference process printed.
func str(m map[string]any, path ...string) string {
	var v any = m
	for _, k := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = o[k]
	}
	switch v := v.(type) {
	case string:
		return v
	case map[string]any: // bytes, printed as {"hex": ...}
		if h, ok := v["hex"].(string); ok {
			return h
		}
	}
	return ""
}

// sameID reports whether an id the reference printed (a ULID string or the
// hex of its 16 bytes) is id.
func sameID(printed string, id wire.ID) bool {
	if parsed, err := wire.ParseID(printed); err == nil {
		return parsed == id
	}
	return strings.EqualFold(printed, hex.EncodeToString(id[:]))
}

// recordOf returns an envelope's record id (zero when it has none).
func recordOf(env *wire.Envelope) wire.ID {
	if env == nil || env.Record == nil {
		return wire.ID{}
	}
	return *env.Record
}

// 1. A Go client calls a reference agent's operation and gets its typed answer.
func TestCrossSDKGoRequestPythonReply(t *testing.T) {
	r := newRig(t)
	r.py.call(r.ctx, t, "serve", map[string]any{"agent": "py-upper", "listen": pyCommands, "respond": responses, "behaviour": "upper"})

	got, err := runtime.Call[Article](r.ctx, r.client, runtime.Out{Topic: pyCommands, From: "go-caller", Target: "py-upper"},
		"upper", wire.ContentJSON, Article{Text: "shared log"}, runtime.WithReplyTopic(responses))
	if err != nil {
		t.Fatalf("Go → Python request: %v", err)
	}
	if got.Text != "SHARED LOG" {
		t.Fatalf("reply %+v, want the reference agent's SHARED LOG", got)
	}
	ev := r.py.event(r.ctx, t, "handled", nil)
	if op := str(ev, "envelope", "operation"); op != "upper" {
		t.Errorf("the reference agent saw operation %q, want upper", op)
	}
}

// 2. A reference contract (no AGDX operation) reaches a lasergen-generated
// Go agent, which answers it from its only command operation.
func TestCrossSDKPythonContractToGeneratedGoAgent(t *testing.T) {
	r := newRig(t)
	cfg := SummarizerAgentConfig(&Summarizer{})
	operations := make(chan string, 1)
	generated := cfg.Handler
	cfg.Handler = runtime.HandlerFunc(func(c *runtime.Ctx) error {
		operations <- c.Message().Operation()
		return generated.Handle(c)
	})
	r.start(t, cfg)

	res := r.py.call(r.ctx, t, "contract", map[string]any{
		"source": "py-orchestrator", "agent": SummarizerAgentID, "inbox": SummarizerListenTopic, "reply_on": SummarizerRespondTopic,
		"body": `{"text":"Agents share one log. Go joins."}`,
	})
	if res["state"] != "Completed" {
		t.Fatalf("contract ended %v (%v), want Completed", res["state"], res["body"])
	}
	var got Summary
	if err := json.Unmarshal([]byte(str(res, "body")), &got); err != nil {
		t.Fatalf("contract reply %q: %v", str(res, "body"), err)
	}
	if got != (Summary{Text: "Agents share one log", Words: 6}) {
		t.Fatalf("contract reply %+v", got)
	}
	if op := receive(r.ctx, t, operations, "the contract's command"); op != "" {
		t.Errorf("the contract's command carried operation %q; the reference sets none, which is what this test is about", op)
	}
}

// 2b. A reference contract reaches the operation a generated Go agent with
// several names in default=.
func TestCrossSDKPythonContractToNamedDefaultOperation(t *testing.T) {
	r := newRig(t)
	r.start(t, DeskAgentConfig(&Desk{}))

	res := r.py.call(r.ctx, t, "contract", map[string]any{
		"source": "py-orchestrator", "agent": DeskAgentID, "inbox": DeskListenTopic, "reply_on": DeskRespondTopic,
		"body": `{"text":"Defaults route contracts. Count is not asked."}`,
	})
	if res["state"] != "Completed" {
		t.Fatalf("contract ended %v (%v), want Completed", res["state"], res["body"])
	}
	var got Summary
	if err := json.Unmarshal([]byte(str(res, "body")), &got); err != nil {
		t.Fatalf("contract reply %q: %v", str(res, "body"), err)
	}
	if got != (Summary{Text: "Defaults route contracts", Words: 7}) {
		t.Fatalf("contract reply %+v, want Summarize's answer (the default), not Count's", got)
	}
}

// 3a. A reference agent streams chunks to a Go caller.
func TestCrossSDKStreamPythonToGo(t *testing.T) {
	r := newRig(t)
	r.py.call(r.ctx, t, "serve", map[string]any{"agent": "py-writer", "listen": pyCommands, "respond": responses, "behaviour": "stream"})
	words := []string{"Go ", "and ", "Python ", "share ", "one ", "log."}
	body, _ := json.Marshal(map[string]any{"words": words})

	var got strings.Builder
	for piece, err := range r.client.Stream(r.ctx, runtime.Out{Topic: pyCommands, From: "go-reader", Target: "py-writer", Body: body},
		runtime.WithReplyTopic(responses), runtime.WithOperation(wire.OperationChat)) {
		if err != nil {
			t.Fatalf("stream from the reference agent: %v", err)
		}
		got.Write(piece)
	}
	if want := strings.Join(words, ""); got.String() != want {
		t.Fatalf("assembled %q, want %q", got.String(), want)
	}
}

// 3b. A Go agent streams chunks to a reference caller.
func TestCrossSDKStreamGoToPython(t *testing.T) {
	r := newRig(t)
	r.start(t, runtime.AgentConfig{ID: "go-writer", Listen: goCommands, Respond: responses,
		Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
			var in struct{ Words []string }
			if err := json.Unmarshal(c.Message().Body(), &in); err != nil {
				return runtime.Reject(err)
			}
			w, err := c.Stream(wire.OperationChat, wire.ContentRaw)
			if err != nil {
				return err
			}
			for _, word := range in.Words {
				if err := w.Send([]byte(word)); err != nil {
					return err
				}
			}
			return w.Close()
		})})
	words := []string{"Chunks ", "cross ", "the ", "SDKs."}
	body, _ := json.Marshal(map[string]any{"words": words})
	conv := conversation.Derive(r.ep.stream + "/stream")
	sent := r.py.call(r.ctx, t, "publish", map[string]any{"topic": goCommands, "source": "py-reader", "conversation": conv.String(),
		"target": "go-writer", "operation": wire.OperationChat, "body": string(body)})
	got := r.py.call(r.ctx, t, "read_chunks", map[string]any{"topic": responses, "correlation": str(sent, "correlation")})
	if want := strings.Join(words, ""); str(got, "text") != want || str(got, "terminal") != "finished" {
		t.Fatalf("the reference assembled %q (%s), want %q finished", str(got, "text"), str(got, "terminal"), want)
	}
}

// verifying returns a laser-go key registry that trusts principal's public
// key pub.
func verifying(t *testing.T, principal string, pub ed25519.PublicKey) *sign.Registry {
	t.Helper()
	keys := sign.NewRegistry()
	if err := keys.Enroll(principal, pub); err != nil {
		t.Fatal(err)
	}
	return keys
}

func seed(b byte) []byte { return slices.Repeat([]byte{b}, ed25519.SeedSize) }

func key(t *testing.T, b byte) *sign.Key {
	t.Helper()
	k, err := sign.KeyFromSeed(seed(b))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// verifiedAgent runs a Go agent that handles only what keys verify,
// reporting what it handled and what it dead-lettered.
func (r *rig) verifiedAgent(t *testing.T, id string, keys *sign.Registry) (handled chan *runtime.Message, parked chan runtime.DeadLetter) {
	handled, parked = make(chan *runtime.Message, 8), make(chan runtime.DeadLetter, 8)
	r.start(t, runtime.AgentConfig{ID: id, Listen: goCommands, Respond: responses,
		Handler:  runtime.HandlerFunc(func(c *runtime.Ctx) error { handled <- c.Message(); return nil }),
		Verifier: keys,
		Tuning:   runtime.Tuning{DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) { parked <- dl }}})
	return handled, parked
}

// 4a. Ed25519 signatures verify both ways.
func TestCrossSDKSignaturesVerifiedBothWays(t *testing.T) {
	r := newRig(t)
	pyKey, goKey := key(t, 0x11), key(t, 0x22)

	t.Run("python signs, go verifies", func(t *testing.T) {
		handled, _ := r.verifiedAgent(t, "go-verifier", verifying(t, "py-signer", pyKey.Public()))
		sent := r.py.call(r.ctx, t, "publish", map[string]any{"topic": goCommands, "source": "py-signer", "target": "go-verifier",
			"conversation": conversation.Derive("signed").String(), "body": "signed in Python", "signing_seed": hex.EncodeToString(seed(0x11))})
		m := receive(r.ctx, t, handled, "verified command from the reference")
		v, err := m.Verify(verifying(t, "py-signer", pyKey.Public()))
		if err != nil || v.Principal != "py-signer" || string(m.Body()) != "signed in Python" || !sameID(str(sent, "record"), recordOf(m.Envelope)) {
			t.Fatalf("verified %+v (%v), body %q", v, err, m.Body())
		}
	})
	t.Run("go signs, python verifies", func(t *testing.T) {
		r.py.call(r.ctx, t, "serve", map[string]any{"agent": "py-verifier", "listen": pyCommands, "respond": responses, "behaviour": "record",
			"verify": map[string]string{"go-signer": hex.EncodeToString(goKey.Public())}})
		env, err := r.client.Send(r.ctx, runtime.Out{Topic: pyCommands, From: "go-signer", Target: "py-verifier", Body: []byte("signed in Go")},
			runtime.WithSigningKey(goKey))
		if err != nil {
			t.Fatal(err)
		}
		ev := r.py.event(r.ctx, t, "handled", func(ev map[string]any) bool { return ev["agent"] == "py-verifier" })
		if str(ev, "body") != "signed in Go" || !sameID(str(ev, "envelope", "record"), recordOf(env)) {
			t.Fatalf("the reference verifier handled %v, want the Go record %s", ev, recordOf(env))
		}
	})
}

// 4b. A signature by a key other than the one enrolled is refused both ways.
func TestCrossSDKWrongKeyRefusedBothWays(t *testing.T) {
	r := newRig(t)
	goKey, other := key(t, 0x22), key(t, 0x33)

	t.Run("go refuses the reference's record", func(t *testing.T) {
		// py-signer's enrolled key is not the one the reference signs with.
		handled, parked := r.verifiedAgent(t, "go-verifier", verifying(t, "py-signer", other.Public()))
		sent := r.py.call(r.ctx, t, "publish", map[string]any{"topic": goCommands, "source": "py-signer", "target": "go-verifier",
			"conversation": conversation.Derive("wrong key").String(), "body": "forged", "signing_seed": hex.EncodeToString(seed(0x11))})
		dl := receive(r.ctx, t, parked, "dead letter of the wrongly signed record")
		if dl.Message == nil || !sameID(str(sent, "record"), recordOf(dl.Message.Envelope)) || dl.Capsule.Reason != wire.ReasonRejected {
			t.Fatalf("parked %+v (cause %v), want the reference record rejected", dl.Capsule, dl.Cause)
		}
		select {
		case m := <-handled:
			t.Fatalf("the Go agent handled %q signed by an unenrolled key", m.Body())
		default:
		}
	})
	t.Run("python refuses the go record", func(t *testing.T) {
		r.py.call(r.ctx, t, "serve", map[string]any{"agent": "py-verifier", "listen": pyCommands, "respond": responses, "behaviour": "record",
			"verify": map[string]string{"go-signer": hex.EncodeToString(goKey.Public())}})
		// One conversation, so one partition: the honest record is handled
		// after the forged one was refused.
		conv := conversation.Derive("refused in python")
		for _, send := range []struct {
			body string
			key  *sign.Key
		}{{"forged", other}, {"honest", goKey}} {
			if _, err := r.client.Send(r.ctx, runtime.Out{Topic: pyCommands, From: "go-signer", Target: "py-verifier", Body: []byte(send.body)},
				runtime.WithSigningKey(send.key), runtime.WithConversation(conv)); err != nil {
				t.Fatal(err)
			}
		}
		ev := r.py.event(r.ctx, t, "handled", func(ev map[string]any) bool { return ev["agent"] == "py-verifier" })
		if str(ev, "body") != "honest" {
			t.Fatalf("the reference verifier handled %q first, want the record signed by an unenrolled key refused", str(ev, "body"))
		}
	})
}

// logPosition decodes a capsule's source as the reference printed it: the
// hex of stream, topic and partition ids (4 bytes each) and offset (8),
// big-endian.
func logPosition(t *testing.T, printed string) wire.LogPosition {
	t.Helper()
	b, err := hex.DecodeString(printed)
	if err != nil || len(b) != 20 {
		t.Fatalf("capsule source %q is not 20 bytes of hex", printed)
	}
	return wire.LogPosition{StreamID: binary.BigEndian.Uint32(b), TopicID: binary.BigEndian.Uint32(b[4:]),
		PartitionID: binary.BigEndian.Uint32(b[8:]), Offset: binary.BigEndian.Uint64(b[12:])}
}

// capsulesOn reads every dead-letter capsule on agent.dlq with the
// envelope of its original record.
func capsulesOn(ctx context.Context, t *testing.T, tr runtime.Transport) map[wire.ID]*wire.DeadLetter {
	t.Helper()
	out := map[wire.ID]*wire.DeadLetter{}
	_, err := logscan.Topic(ctx, tr, runtime.TopicDLQ, nil, func(rec *runtime.Incoming) {
		dl, err := wire.DecodeDeadLetter(rec.Payload)
		if err != nil {
			t.Errorf("capsule at %d:%d does not decode: %v", rec.Partition, rec.Offset, err)
			return
		}
		env, err := wire.DecodeEnvelope(dl.Payload)
		if err != nil {
			t.Errorf("the record in capsule %d:%d does not decode: %v", rec.Partition, rec.Offset, err)
			return
		}
		out[recordOf(env)] = dl
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// 5. A poison record is dead-lettered by each side, and the other side reads
// the capsule: it decodes and names the original record.
func TestCrossSDKDeadLetterCapsulesReadByTheOtherSide(t *testing.T) {
	r := newRig(t)

	t.Run("go parks, python reads", func(t *testing.T) {
		parked := make(chan runtime.DeadLetter, 1)
		r.start(t, runtime.AgentConfig{ID: "go-strict", Listen: goCommands, Respond: responses,
			Handler: runtime.HandlerFunc(func(c *runtime.Ctx) error {
				return runtime.Reject(errors.New("poison record refused by the Go agent"))
			}),
			Tuning: runtime.Tuning{DeadLetterSink: func(_ context.Context, dl runtime.DeadLetter) { parked <- dl }}})
		sent := r.py.call(r.ctx, t, "publish", map[string]any{"topic": goCommands, "source": "py-sender", "target": "go-strict",
			"conversation": conversation.Derive("poison for go").String(), "body": "poison"})
		dl := receive(r.ctx, t, parked, "Go dead letter")
		if dl.PublishErr != nil {
			t.Fatal(dl.PublishErr)
		}
		got := r.py.call(r.ctx, t, "read_dlq", nil)
		for _, c := range got["capsules"].([]any) {
			c := c.(map[string]any)
			if sameID(str(c, "original", "record"), recordOf(dl.Message.Envelope)) {
				if !sameID(str(sent, "record"), recordOf(dl.Message.Envelope)) || str(c, "original_body") != "poison" {
					t.Fatalf("the reference read capsule %v for record %s", c, str(sent, "record"))
				}
				capsule := c["capsule"].(map[string]any)
				if reason, _ := capsule["reason"].(float64); wire.DeadLetterReason(reason) != wire.ReasonRejected {
					t.Errorf("the reference read reason %v, want rejected (%d)", reason, wire.ReasonRejected)
				}
				if detail, _ := capsule["detail"].(string); !strings.Contains(detail, "poison record refused by the Go agent") {
					t.Errorf("the reference read detail %q, want the Go handler's error", detail)
				}
				if got := logPosition(t, str(capsule, "source")); got != dl.Capsule.Source {
					t.Errorf("the reference read source %v, want %v", got, dl.Capsule.Source)
				}
				return
			}
		}
		t.Fatalf("the reference found no capsule naming record %s among %v", str(sent, "record"), got["capsules"])
	})
	t.Run("python parks, go reads", func(t *testing.T) {
		r.py.call(r.ctx, t, "serve", map[string]any{"agent": "py-strict", "listen": pyCommands, "respond": responses, "behaviour": "poison", "retry_max_attempts": 1})
		env, err := r.client.Send(r.ctx, runtime.Out{Topic: pyCommands, From: "go-sender", Target: "py-strict", Body: []byte("poison")})
		if err != nil {
			t.Fatal(err)
		}
		ev := r.py.event(r.ctx, t, "dead_letter", func(ev map[string]any) bool { return ev["agent"] == "py-strict" })
		if ev["publish_error"] != nil {
			t.Fatalf("the reference could not publish its capsule: %v", ev["publish_error"])
		}
		dl, ok := capsulesOn(r.ctx, t, r.client.Transport())[recordOf(env)]
		if !ok {
			t.Fatalf("no capsule on %s names the Go record %s", runtime.TopicDLQ, recordOf(env))
		}
		if dl.Reason != wire.ReasonRetryExhausted || dl.Attempts != 1 || dl.Detail == nil || !strings.Contains(*dl.Detail, "poison record refused by the reference agent") {
			t.Errorf("capsule reason %v after %d attempts, detail %v; want the reference handler's error after its one attempt", dl.Reason, dl.Attempts, dl.Detail)
		}
	})
}

// 6. Context assembled from both sides' turns is the same records in the
// same order on both sides.
func TestCrossSDKContextAssembledEqualOnBothSides(t *testing.T) {
	r := newRig(t)
	conv := conversation.Derive(r.ep.stream + "/context")
	var want []string
	for i := range 4 {
		env, err := r.client.Send(r.ctx, runtime.Out{Kind: wire.KindEvent, Topic: sessions, From: "go-agent", Body: []byte("go turn " + string(rune('1'+i)))}, runtime.WithConversation(conv))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, recordOf(env).String())
		sent := r.py.call(r.ctx, t, "publish", map[string]any{"topic": sessions, "source": "py-agent", "conversation": conv.String(),
			"kind": "event", "body": "py turn " + string(rune('1'+i))})
		id, err := wire.ParseID(str(sent, "record"))
		if err != nil {
			t.Fatalf("the reference minted record %q: %v", str(sent, "record"), err)
		}
		want = append(want, id.String())
	}

	history, err := conversation.Assemble(r.ctx, r.client.Transport(), conv, conversation.Options{Topics: []string{sessions}})
	if err != nil {
		t.Fatal(err)
	}
	var goSide []string
	for _, m := range history {
		goSide = append(goSide, recordOf(m.Envelope).String())
	}
	res := r.py.call(r.ctx, t, "assemble", map[string]any{"conversation": conv.String(), "topics": []string{sessions}})
	var pySide []string
	for _, m := range res["messages"].([]any) {
		id, err := wire.ParseID(str(m.(map[string]any), "record"))
		if err != nil {
			t.Fatalf("the reference assembled record %v: %v", m, err)
		}
		pySide = append(pySide, id.String())
	}
	if !slices.Equal(goSide, want) {
		t.Errorf("Go assembled %v, want the 8 turns in the order written %v", goSide, want)
	}
	if !slices.Equal(pySide, goSide) {
		t.Errorf("the reference assembled %v, Go %v", pySide, goSide)
	}
}

// 7. The reference's registry finds a Go agent's card by its capability.
func TestCrossSDKGoCardFoundByTheReferenceRegistry(t *testing.T) {
	r := newRig(t)
	cfg := SummarizerAgentConfig(&Summarizer{})
	cfg.CardTopic = runtime.TopicRegistry
	r.start(t, cfg)

	got := r.py.call(r.ctx, t, "registry", map[string]any{"agent": SummarizerAgentID, "skill": SummarizerOpSummarize})
	if got["card"] == nil {
		t.Fatalf("the reference registry has no card for %s (it folded %v)", SummarizerAgentID, got["agents"])
	}
	if resolved, _ := got["resolved"].([]any); !slices.Contains(resolved, any(SummarizerAgentID)) {
		t.Fatalf("the reference resolved skill %s to %v, want %s", SummarizerOpSummarize, resolved, SummarizerAgentID)
	}
}
