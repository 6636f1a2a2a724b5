package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/dedup"
	"github.com/lasergo/laser/internal/vectors"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

func TestConsumerHandlesPlainMessageAndCommitsAfterwards(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	got := make(chan string, 1)
	release := make(chan struct{})
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			got <- string(c.Message().Body())
			<-release
			return nil
		}),
	})
	pos := plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender}, "hello")
	if body := recv(t, got, "handler"); body != "hello" {
		t.Fatalf("body = %q", body)
	}
	// While the handler runs, nothing is committed.
	if _, ok := stored(t, log, pos.Partition); ok {
		t.Fatal("offset committed before the handler returned")
	}
	close(release)
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if off, ok := stored(t, log, pos.Partition); !ok || off != pos.Offset {
		t.Fatalf("stored = %d, %v; want %d", off, ok, pos.Offset)
	}
}

func TestDecodeFailureDeadLettersRawPayloadUnderFreshConversation(t *testing.T) {
	log := newLog(t, 4, clock.System{})
	sink, dls := deadLetters()
	ids := &seqIDs{}
	handled := make(chan struct{}, 1)
	r := start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(*runtime.Ctx) error { handled <- struct{}{}; return nil }),
		Client:  runtime.NewClient(log, runtime.ClientConfig{IDs: ids}),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	payload := []byte("\xffnot a provenance message")
	pos := raw(t, log, "k", nil, payload)

	dl := recv(t, dls, "dead letter")
	if dl.PublishErr != nil {
		t.Fatal(dl.PublishErr)
	}
	if dl.Message != nil {
		t.Fatal("an undecodable record has no message")
	}
	c := dl.Capsule
	if c.Reason != wire.ReasonDecodeFailed || c.Attempts != 0 || c.Detail != nil || !bytes.Equal(c.Payload, payload) {
		t.Fatalf("capsule = %+v", c)
	}
	if c.Source != (wire.LogPosition{StreamID: 7, TopicID: 0, PartitionID: pos.Partition, Offset: pos.Offset}) {
		t.Fatalf("source = %+v, pos %v", c.Source, pos)
	}
	if dl.Cause == nil {
		t.Fatal("the sink should learn why the record did not decode")
	}
	// The capsule on the DLQ topic is the same, under a fresh conversation
	// with the poison record as causal parent and agdx.ct = cbor.
	recs := readAll(t, log, dlq)
	if len(recs) != 1 {
		t.Fatalf("dlq has %d records", len(recs))
	}
	onLog, err := wire.DecodeDeadLetter(recs[0].Payload)
	if err != nil || !bytes.Equal(onLog.Payload, payload) {
		t.Fatalf("dlq capsule = %+v, %v", onLog, err)
	}
	prov, err := wire.DecodeProvenance(recs[0].Headers)
	if err != nil {
		t.Fatal(err)
	}
	if prov.Conversation != wire.IDFromUint128(0xfeed, 1) {
		t.Fatalf("conversation = %s, want the freshly minted id", prov.Conversation)
	}
	if prov.CausalParent == nil || *prov.CausalParent != (wire.MessageID{Partition: pos.Partition, Offset: pos.Offset}) {
		t.Fatalf("causal parent = %v", prov.CausalParent)
	}
	if ct, _ := recs[0].Headers.Get(wire.HeaderContentType); ct.Kind != wire.HeaderKindUint8 || ct.Data[0] != uint8(wire.ContentCBOR) {
		t.Fatalf("agdx.ct = %+v", ct)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if off, ok := stored(t, log, pos.Partition); !ok || off != pos.Offset {
		t.Fatal("a parked record must be committed")
	}
	select {
	case <-handled:
		t.Fatal("handler ran for an undecodable record")
	default:
	}
}

func TestUnsupportedAgentVersionIsDecodeFailure(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	start(t, log, runtime.ConsumerConfig{Agent: agent, Handler: handlerFunc(func(*runtime.Ctx) error { return nil }), Tuning: runtime.Tuning{DeadLetterSink: sink}})
	env := command("x")
	payload, _ := env.Marshal()
	headers := wire.EnvelopeHeaders(env, wire.ContentJSON)
	headers.Set(wire.HeaderAgentVersion, wire.Uint32Value(2))
	raw(t, log, wire.PartitionKey(env.Conversation), headers, payload)
	dl := recv(t, dls, "dead letter")
	if dl.Capsule.Reason != wire.ReasonDecodeFailed || !strings.Contains(dl.Cause.Error(), "version 2") {
		t.Fatalf("reason %v cause %v", dl.Capsule.Reason, dl.Cause)
	}
}

// countingMiddleware counts hook calls.
type countingMiddleware struct {
	runtime.MiddlewareDefaults
	before, after atomic.Int32
	reject        error
	attempts      chan int
}

func (m *countingMiddleware) BeforeHandle(context.Context, *runtime.Message) error {
	m.before.Add(1)
	return m.reject
}

func (m *countingMiddleware) AfterHandle(_ context.Context, _ *runtime.Message, _ error, attempt int) {
	m.after.Add(1)
	if m.attempts != nil {
		m.attempts <- attempt
	}
}

func TestInvalidFixturesAndMustUnderstandDeadLetterBeforeMiddleware(t *testing.T) {
	paths := vectors.AGDX.Paths(t)
	var names []string
	for name := range paths {
		if strings.HasPrefix(name, "agent_invalid_") || strings.HasPrefix(name, "agent_must_understand") {
			names = append(names, name)
		}
	}
	if len(names) < 2 {
		t.Fatalf("found only %v among the AGDX vectors", names)
	}
	log := newLog(t, 2, clock.System{})
	sink, dls := deadLetters()
	mw := &countingMiddleware{}
	start(t, log, runtime.ConsumerConfig{
		Agent:      agent,
		Handler:    handlerFunc(func(*runtime.Ctx) error { t.Error("handler ran"); return nil }),
		Middleware: []runtime.Middleware{mw},
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	for _, name := range names {
		payload, err := os.ReadFile(paths[name])
		if err != nil {
			t.Fatal(err)
		}
		env, err := wire.DecodeEnvelope(payload)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw(t, log, wire.PartitionKey(env.Conversation), wire.EnvelopeHeaders(env, wire.ContentJSON), payload)
	}
	for range names {
		dl := recv(t, dls, "dead letter")
		if dl.Capsule.Reason != wire.ReasonDecodeFailed || dl.PublishErr != nil {
			t.Fatalf("capsule %+v publish %v", dl.Capsule, dl.PublishErr)
		}
	}
	if n := mw.before.Load(); n != 0 {
		t.Fatalf("middleware ran %d times", n)
	}
}

func TestUnderstoodFeaturesLetMustUnderstandEnvelopeThrough(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	payload := fixture(t, "agent_must_understand.bin")
	env, err := wire.DecodeEnvelope(payload)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *runtime.Message, 1)
	start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- c.Message(); return nil }),
		Tuning: runtime.Tuning{
			UnderstoodFeatures: env.MustUnderstand,
		},
	})
	raw(t, log, wire.PartitionKey(env.Conversation), wire.EnvelopeHeaders(env, wire.ContentJSON), payload)
	m := recv(t, got, "handled message")
	if m.Envelope == nil || m.Envelope.MustUnderstand != env.MustUnderstand {
		t.Fatalf("message = %+v", m)
	}
}

func TestTargetFilterSkipsMessagesForOtherAgentsAndCommits(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	got := make(chan string, 4)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			got <- string(c.Message().Body())
			return nil
		}),
	})
	c := conv()
	plain(t, log, wire.Provenance{Conversation: c, Target: "someone-else"}, "not mine")
	plain(t, log, wire.Provenance{Conversation: c, Target: agent}, "mine")
	last := plain(t, log, wire.Provenance{Conversation: c}, "untargeted")
	if b := recv(t, got, "first"); b != "mine" {
		t.Fatalf("first handled = %q", b)
	}
	if b := recv(t, got, "second"); b != "untargeted" {
		t.Fatalf("second handled = %q", b)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if off, _ := stored(t, log, 0); off != last.Offset {
		t.Fatalf("stored %d want %d", off, last.Offset)
	}
	if n := len(readAll(t, log, dlq)); n != 0 {
		t.Fatalf("skipped message was dead-lettered (%d)", n)
	}
}

// signedCommand returns a command signed with key over the headers it will
// be published with.
func signedCommand(t *testing.T, key *sign.Key, body string, ct wire.ContentType) *wire.Envelope {
	t.Helper()
	env := command(body)
	code, av := uint8(ct), wire.AgentOpVersion
	if err := key.Sign(env, &wire.SignatureContext{ContentType: &code, AgentVersion: &av}); err != nil {
		t.Fatal(err)
	}
	return env
}

func newKey(b byte) *sign.Key {
	var seed [32]byte
	for i := range seed {
		seed[i] = b
	}
	return sign.NewKey(seed)
}

func TestSignatureGateRejectsUnverifiedAndSetsPrincipal(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	good, forger := newKey(1), newKey(2)
	reg := sign.NewRegistry()
	if err := reg.Enroll("planner-principal", good.Public()); err != nil {
		t.Fatal(err)
	}
	if err := reg.AllowSource("planner-principal", sender); err != nil {
		t.Fatal(err)
	}
	sink, dls := deadLetters()
	got := make(chan *runtime.Message, 1)
	start(t, log, runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(c *runtime.Ctx) error { got <- c.Message(); return nil }),
		Verifier: reg,
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})

	// Unsigned AGDX, a plain message, a forged signature, and a signature
	// over a different content type are all refused as rejected.
	envelope(t, log, command("unsigned"), wire.ContentJSON)
	plain(t, log, wire.Provenance{Conversation: conv()}, "plain")
	envelope(t, log, signedCommand(t, forger, "forged", wire.ContentJSON), wire.ContentJSON)
	envelope(t, log, signedCommand(t, good, "ct flipped", wire.ContentJSON), wire.ContentCBOR)
	for i := 0; i < 4; i++ {
		dl := recv(t, dls, "rejection")
		if dl.Capsule.Reason != wire.ReasonRejected || dl.Capsule.Attempts != 0 || *dl.Capsule.Detail != "signature verification failed" {
			t.Fatalf("capsule %+v detail %q", dl.Capsule, *dl.Capsule.Detail)
		}
	}
	envelope(t, log, signedCommand(t, good, "honest", wire.ContentJSON), wire.ContentJSON)
	m := recv(t, got, "verified message")
	if string(m.Body()) != "honest" || m.VerifiedPrincipal != "planner-principal" {
		t.Fatalf("body %q principal %q", m.Body(), m.VerifiedPrincipal)
	}
}

func TestSignatureReplayWindowDropsRepeatedRecord(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	key := newKey(3)
	reg := sign.NewRegistry()
	_ = reg.Enroll(sender, key.Public())
	got := make(chan string, 4)
	r := start(t, log, runtime.ConsumerConfig{
		Agent:    agent,
		Handler:  handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Verifier: reg,
	})
	env := signedCommand(t, key, "once", wire.ContentJSON)
	envelope(t, log, env, wire.ContentJSON)
	envelope(t, log, env, wire.ContentJSON) // the exact signed bytes, replayed
	last := envelope(t, log, signedCommand(t, key, "next", wire.ContentJSON), wire.ContentJSON)
	if b := recv(t, got, "first"); b != "once" {
		t.Fatal(b)
	}
	if b := recv(t, got, "second"); b != "next" {
		t.Fatalf("the replay was handled: %q", b)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if off, _ := stored(t, log, 0); off != last.Offset {
		t.Fatal("replay drop must commit")
	}
	if n := len(readAll(t, log, dlq)); n != 0 {
		t.Fatal("a replay is dropped, not dead-lettered")
	}
}

func TestFenceGateDropsStaleFenceAcceptsEqualAndRunsBeforeDedup(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	got := make(chan string, 8)
	r := start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
	})
	c := conv()
	fence := func(n uint64) *uint64 { return &n }
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, Fence: fence(2), IdempotencyKey: "a"}, "holder 2")
	// A stale holder (fence 1) reusing key "b" is dropped before dedup, so
	// the current holder's "b" still goes through.
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, Fence: fence(1), IdempotencyKey: "b"}, "stale holder")
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, Fence: fence(2), IdempotencyKey: "b"}, "holder 2 again")
	plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, Fence: fence(1)}, "other conversation")
	want := []string{"holder 2", "holder 2 again", "other conversation"}
	for _, w := range want {
		if b := recv(t, got, w); b != w {
			t.Fatalf("handled %q, want %q", b, w)
		}
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		t.Fatalf("also handled %q", b)
	default:
	}
}

func TestDedupDropsDuplicatesScopedBySender(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	got := make(chan string, 8)
	r := start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
	})
	c := conv()
	plain(t, log, wire.Provenance{Conversation: c, Agent: "a", IdempotencyKey: "k"}, "a/k")
	plain(t, log, wire.Provenance{Conversation: c, Agent: "a", IdempotencyKey: "k"}, "a/k again")
	plain(t, log, wire.Provenance{Conversation: c, Agent: "b", IdempotencyKey: "k"}, "b/k")
	last := plain(t, log, wire.Provenance{Conversation: c, IdempotencyKey: "k"}, "anonymous k")
	for _, w := range []string{"a/k", "b/k", "anonymous k"} {
		if b := recv(t, got, w); b != w {
			t.Fatalf("handled %q, want %q", b, w)
		}
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if off, _ := stored(t, log, 0); off != last.Offset {
		t.Fatal("duplicates must commit")
	}
}

func TestDedupMarksKeyBeforeHandlerSoDuplicateOfParkedMessageIsDropped(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	calls := make(chan string, 8)
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			calls <- string(c.Message().Body())
			return runtime.Reject(fmt.Errorf("bad order"))
		}),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	c := conv()
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "order-1"}, "first")
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "order-1"}, "duplicate")
	recv(t, dls, "rejection")
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := len(calls); n != 1 {
		t.Fatalf("handler ran %d times", n)
	}
	if n := len(readAll(t, log, dlq)); n != 1 {
		t.Fatalf("%d capsules, want 1", n)
	}
}

func TestDeadlinePassedDeadLettersWithoutHandling(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	sink, dls := deadLetters()
	got := make(chan string, 2)
	start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Client:  runtime.NewClient(log, runtime.ClientConfig{Clock: clock}),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	now := uint64(epoch.UnixMicro())
	past, exact := now-1, now
	plain(t, log, wire.Provenance{Conversation: conv(), Deadline: &past}, "late")
	plain(t, log, wire.Provenance{Conversation: conv(), Deadline: &exact}, "just in time")
	dl := recv(t, dls, "deadline dead letter")
	if dl.Capsule.Reason != wire.ReasonDeadlineExceeded || dl.Capsule.Attempts != 0 || *dl.Capsule.Detail != "message past its deadline" {
		t.Fatalf("capsule %+v", dl.Capsule)
	}
	if b := recv(t, got, "in-time message"); b != "just in time" {
		t.Fatal(b)
	}
	// The capsule's provenance drops the deadline and points at the original.
	recs := readAll(t, log, dlq)
	prov, err := wire.DecodeProvenance(recs[0].Headers)
	if err != nil {
		t.Fatal(err)
	}
	if prov.Deadline != nil || prov.CausalParent == nil || prov.CausalParent.Offset != 0 {
		t.Fatalf("capsule provenance %+v", prov)
	}
}

func TestAckOnPickupPublishesWorkingStatusBeforeMiddleware(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	mw := &countingMiddleware{reject: errors.New("not allowed")}
	start(t, log, runtime.ConsumerConfig{
		Agent:        agent,
		RespondTopic: resp,
		Handler:      handlerFunc(func(*runtime.Ctx) error { t.Error("handler ran"); return nil }),
		Middleware:   []runtime.Middleware{mw},
		Tuning: runtime.Tuning{
			AckOnPickup:    true,
			DeadLetterSink: sink,
		},
	})
	cmd := command("do it")
	envelope(t, log, cmd, wire.ContentJSON)
	dl := recv(t, dls, "middleware rejection")
	if dl.Capsule.Reason != wire.ReasonRejected || dl.Capsule.Attempts != 0 || *dl.Capsule.Detail != "not allowed" {
		t.Fatalf("capsule %+v", dl.Capsule)
	}
	acks := readAll(t, log, resp)
	if len(acks) != 1 {
		t.Fatalf("%d acks", len(acks))
	}
	ack, err := wire.DecodeEnvelope(acks[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	if ack.Kind != wire.KindStatus || *ack.Operation != wire.OperationTask || *ack.TaskState != wire.TaskWorking ||
		*ack.Correlation != *cmd.Correlation || ack.Conversation != cmd.Conversation || ack.Source != agent {
		t.Fatalf("ack %+v", ack)
	}
}

func TestMiddlewareAfterHandleSeesEveryAttempt(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	mw := &countingMiddleware{attempts: make(chan int, 8)}
	start(t, log, runtime.ConsumerConfig{
		Agent:      agent,
		Handler:    handlerFunc(func(*runtime.Ctx) error { return errBoom }),
		Middleware: []runtime.Middleware{mw},
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
			Retry:          runtime.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Nanosecond},
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	dl := recv(t, dls, "retry exhausted")
	if dl.Capsule.Reason != wire.ReasonRetryExhausted || dl.Capsule.Attempts != 3 || !strings.Contains(*dl.Capsule.Detail, "boom") {
		t.Fatalf("capsule %+v", dl.Capsule)
	}
	for want := 1; want <= 3; want++ {
		if got := recv(t, mw.attempts, "attempt"); got != want {
			t.Fatalf("attempt %d, want %d", got, want)
		}
	}
	if mw.before.Load() != 1 {
		t.Fatal("before must run once")
	}
}

func TestNonRetryableHandlerErrorIsRejectedAtOnce(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	var calls atomic.Int32
	start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(*runtime.Ctx) error { calls.Add(1); return runtime.Reject(fmt.Errorf("invalid amount")) }),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	dl := recv(t, dls, "rejection")
	if dl.Capsule.Reason != wire.ReasonRejected || dl.Capsule.Attempts != 1 || *dl.Capsule.Detail != "rejected: invalid amount" {
		t.Fatalf("capsule %+v", dl.Capsule)
	}
	if calls.Load() != 1 {
		t.Fatal("a rejected message is not retried")
	}
}

func TestRetryBackoffDoublesOnTheInjectedClock(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	sink, dls := deadLetters()
	attempts := make(chan int, 8)
	n := 0
	start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(*runtime.Ctx) error { n++; attempts <- n; return errBoom }),
		Client:  runtime.NewClient(log, runtime.ClientConfig{Clock: clock}),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for _, want := range []time.Duration{200, 400, 800, 1600} {
		recv(t, attempts, "attempt")
		if err := clock.BlockUntil(ctx, 1); err != nil {
			t.Fatalf("waiting for the %v backoff: %v", want*time.Millisecond, err)
		}
		d, _ := clock.NextTimer()
		if d != want*time.Millisecond {
			t.Fatalf("backoff %v, want %v", d, want*time.Millisecond)
		}
		clock.Advance(d)
	}
	if got := recv(t, attempts, "fifth attempt"); got != 5 {
		t.Fatal(got)
	}
	dl := recv(t, dls, "retry exhausted")
	if dl.Capsule.Reason != wire.ReasonRetryExhausted || dl.Capsule.Attempts != 5 {
		t.Fatalf("capsule %+v", dl.Capsule)
	}
}

func TestHandlerPanicIsRecoveredAndRetried(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	got := make(chan int, 4)
	n := 0
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(*runtime.Ctx) error {
			n++
			if n == 1 {
				var none []int
				_ = none[n] // a runtime error: index out of range
			}
			got <- n
			return nil
		}),
		Tuning: runtime.Tuning{
			Retry: runtime.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Nanosecond},
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	if a := recv(t, got, "second attempt"); a != 2 {
		t.Fatalf("attempt %d", a)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

func TestPoisonInsideBatchCarriesItsOwnOffset(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	c := conv()
	for i := 0; i < 3; i++ {
		plain(t, log, wire.Provenance{Conversation: c}, fmt.Sprintf("m%d", i))
	}
	sink, dls := deadLetters()
	start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			if string(ctx.Message().Body()) == "m1" {
				return runtime.Reject(fmt.Errorf("poison"))
			}
			return nil
		}),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
			PollBatch:      10,
		},
	})
	dl := recv(t, dls, "poison")
	if dl.Capsule.Source.Offset != 1 {
		t.Fatalf("capsule offset %d, want 1 (the record's own offset)", dl.Capsule.Source.Offset)
	}
}

func TestDeadLetterPublishFailureStopsUncommittedThenRedeliversOneCapsule(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	if err := log.DeleteTopic(dlq); err != nil {
		t.Fatal(err)
	}
	sink, dls := deadLetters()
	var calls atomic.Int32
	cfg := runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(*runtime.Ctx) error { calls.Add(1); return runtime.Reject(fmt.Errorf("poison")) }),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	}
	r := start(t, log, cfg)
	pos := plain(t, log, wire.Provenance{Conversation: conv()}, "poison")
	dl := recv(t, dls, "failed dead letter")
	if dl.PublishErr == nil {
		t.Fatal("sink must see the publish failure")
	}
	if err := r.wait(t); err == nil {
		t.Fatal("the consumer must stop when a dead letter cannot be published")
	}
	if _, ok := stored(t, log, pos.Partition); ok {
		t.Fatal("offset committed although the capsule was lost")
	}
	// Restore the topic and restart: the message comes back, is handled
	// again and parked exactly once.
	if err := log.EnsureTopics(context.Background(), 1, dlq); err != nil {
		t.Fatal(err)
	}
	r = start(t, log, cfg)
	if dl := recv(t, dls, "dead letter after restart"); dl.PublishErr != nil {
		t.Fatal(dl.PublishErr)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, log, dlq)); n != 1 {
		t.Fatalf("%d capsules, want exactly 1", n)
	}
	if calls.Load() != 2 {
		t.Fatalf("handler ran %d times, want 2", calls.Load())
	}
	if off, ok := stored(t, log, pos.Partition); !ok || off != pos.Offset {
		t.Fatal("committed after the capsule landed")
	}
}

func TestWarmDedupSkipsPreRestartDuplicateAndHandlesNewKey(t *testing.T) {
	log := newLog(t, 2, clock.System{})
	got := make(chan string, 8)
	cfg := runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Tuning: runtime.Tuning{
			WarmDedup: true,
		},
	}
	r := start(t, log, cfg)
	c := conv()
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "job"}, "job")
	recv(t, got, "job")
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	// After a restart the in-memory window is gone; warm-up rebuilds it.
	r = start(t, log, cfg)
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "job"}, "job duplicate")
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "job-2"}, "job-2")
	if b := recv(t, got, "new key"); b != "job-2" {
		t.Fatalf("handled %q", b)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
}

func TestWarmDedupNeverReadsPastStoredOffset(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	c := conv()
	// Two messages on the log, only the first consumed by the group.
	first := plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "one"}, "one")
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "two"}, "two")
	sub, err := log.Join(context.Background(), topic, agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Commit(context.Background(), first.Partition, first.Offset); err != nil {
		t.Fatal(err)
	}
	_ = sub.Leave(context.Background())
	got := make(chan string, 4)
	start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Tuning: runtime.Tuning{
			WarmDedup: true,
		},
	})
	// "two" was never consumed: warming must not have marked it.
	if b := recv(t, got, "unconsumed message"); b != "two" {
		t.Fatalf("handled %q", b)
	}
}

func TestCommitFailureStopsTheConsumer(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	tr := &failingCommits{Transport: log}
	r := start(t, tr, runtime.ConsumerConfig{Agent: agent, Handler: handlerFunc(func(*runtime.Ctx) error { return nil })})
	plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	if err := r.wait(t); err == nil || !strings.Contains(err.Error(), "store refused") {
		t.Fatalf("err = %v", err)
	}
}

// failingCommits refuses every offset store.
type failingCommits struct{ runtime.Transport }

func (f *failingCommits) Join(ctx context.Context, topic, group string) (runtime.Subscription, error) {
	sub, err := f.Transport.Join(ctx, topic, group)
	return &refusingSub{Subscription: sub}, err
}

type refusingSub struct{ runtime.Subscription }

func (*refusingSub) Commit(context.Context, uint32, uint64) error { return errors.New("store refused") }

func TestGracefulShutdownWaitsForInFlightHandlerAndLeaves(t *testing.T) {
	log := newLog(t, 2, clock.System{})
	started, release := make(chan struct{}), make(chan struct{})
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(*runtime.Ctx) error {
			close(started)
			<-release
			return nil
		}),
	})
	pos := plain(t, log, wire.Provenance{Conversation: conv()}, "slow")
	recv(t, started, "handler start")
	close(r.stop)
	select {
	case err := <-r.done:
		t.Fatalf("Run returned %v while a handler was in flight", err)
	default:
	}
	close(release)
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}
	if off, ok := stored(t, log, pos.Partition); !ok || off != pos.Offset {
		t.Fatal("drained message not committed")
	}
	// Having left, the group is empty: a new member owns every partition.
	tp, _ := log.Topic(topic)
	g, _ := tp.Group(agent)
	if members := g.Members(); len(members) != 0 {
		t.Fatalf("members after a clean shutdown: %+v", members)
	}
}

func TestShutdownGraceTimeoutReturnsTimeoutWithoutCommitting(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	started := make(chan struct{})
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			close(started)
			<-c.Done() // stuck until told to give up
			return c.Err()
		}),
		Client: runtime.NewClient(log, runtime.ClientConfig{Clock: clock}),
		Tuning: runtime.Tuning{
			ShutdownGrace: time.Second,
		},
	})
	pos := plain(t, log, wire.Provenance{Conversation: conv()}, "stuck")
	recv(t, started, "handler start")
	close(r.stop)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := clock.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	err := r.wait(t)
	if runtime.CodeOf(err) != runtime.CodeTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if _, ok := stored(t, log, pos.Partition); ok {
		t.Fatal("an unfinished message was committed")
	}
	if n := len(readAll(t, log, dlq)); n != 0 {
		t.Fatal("an interrupted message must not be dead-lettered")
	}
}

func TestHardStopNeitherCommitsNorDeadLetters(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	started := make(chan struct{})
	r := start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			close(started)
			<-c.Done()
			return c.Err()
		}),
	})
	pos := plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	recv(t, started, "handler start")
	r.cancel()
	if err := r.wait(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if _, ok := stored(t, log, pos.Partition); ok {
		t.Fatal("hard stop committed")
	}
	if n := len(readAll(t, log, dlq)); n != 0 {
		t.Fatal("hard stop dead-lettered")
	}
}

func TestDeadLetterCapsuleKeepsTheOriginalProvenance(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(*runtime.Ctx) error { return runtime.Reject(fmt.Errorf("no")) }),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	deadline := uint64(time.Now().Add(time.Hour).UnixMicro())
	in := wire.Provenance{Conversation: conv(), Agent: sender, Target: agent, IdempotencyKey: "k-1", Correlation: "c-1", Deadline: &deadline}
	pos := plain(t, log, in, "x")
	dl := recv(t, dls, "dead letter")
	if dl.Message == nil || dl.Message.Position != pos || runtime.CodeOf(dl.Cause) != runtime.CodeRejected {
		t.Fatalf("sink saw %+v", dl)
	}
	recs := readAll(t, log, dlq)
	if len(recs) != 1 || recs[0].Position != dl.Position {
		t.Fatalf("capsule at %v, sink told %v", recs, dl.Position)
	}
	got, err := wire.DecodeProvenance(recs[0].Headers)
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.Deadline = nil
	want.CausalParent = &wire.MessageID{Partition: pos.Partition, Offset: pos.Offset}
	if got.Conversation != want.Conversation || got.Agent != want.Agent || got.Target != want.Target ||
		got.IdempotencyKey != want.IdempotencyKey || got.Correlation != want.Correlation ||
		got.Deadline != nil || *got.CausalParent != *want.CausalParent {
		t.Fatalf("capsule provenance %+v, want %+v", got, want)
	}
	if recs[0].Position.Partition != pos.Partition {
		t.Fatal("the capsule is keyed by the original conversation")
	}
}

func TestHandlersEmitEventsAndTaskStatuses(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	_ = log.EnsureTopics(context.Background(), 1, "agent.audit")
	r := start(t, log, runtime.ConsumerConfig{
		Agent:        agent,
		RespondTopic: resp,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			if err := c.Respond(nil, runtime.WithTaskState(wire.TaskInputRequired)); err != nil {
				return err
			}
			_, err := c.Client().Send(c, runtime.Out{Kind: wire.KindEvent, Topic: "agent.audit", Body: []byte(`{"seen":true}`)}, runtime.WithOperation("state_snapshot"), runtime.WithContentType(wire.ContentJSON))
			return err
		}),
	})
	cmd := command("go")
	envelope(t, log, cmd, wire.ContentJSON)
	transporttest.Eventually(t, waitLimit, "event published", func() bool { return len(readAll(t, log, "agent.audit")) == 1 })
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	statuses := readAll(t, log, resp)
	if len(statuses) != 1 {
		t.Fatalf("%d statuses", len(statuses))
	}
	st, err := wire.DecodeEnvelope(statuses[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	if st.Kind != wire.KindStatus || *st.TaskState != wire.TaskInputRequired || *st.Correlation != *cmd.Correlation || *st.Target != sender {
		t.Fatalf("status %+v", st)
	}
	events := readAll(t, log, "agent.audit")
	ev, err := wire.DecodeEnvelope(events[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != wire.KindEvent || ev.Conversation != cmd.Conversation || ev.Source != agent || *ev.Operation != "state_snapshot" {
		t.Fatalf("event %+v", ev)
	}
	if ct, _ := events[0].Headers.Get(wire.HeaderContentType); ct.Data[0] != uint8(wire.ContentJSON) {
		t.Fatal("event content type")
	}
}

// durableDedup stands in for a Deduplicator backed by a store that survives
// restarts; forgetful says whether it implements dedup.Forgetter.
type durableDedup struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (d *durableDedup) Observe(_ context.Context, key string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen[key] {
		return false, nil
	}
	d.seen[key] = true
	return true, nil
}

type forgetfulDedup struct{ *durableDedup }

func (d forgetfulDedup) Forget(_ context.Context, key string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.seen, key)
	return nil
}

func TestDurableDedupThatForgetsParksAPoisonWhoseDeadLetterFailed(t *testing.T) {
	for _, forgets := range []bool{true, false} {
		t.Run(fmt.Sprintf("forgets=%v", forgets), func(t *testing.T) {
			log := newLog(t, 1, clock.System{})
			tr := transporttest.NewFaulty(log)
			tr.FailPublish(func(topic string) error {
				if topic == dlq {
					return errors.New("dlq unavailable")
				}
				return nil
			})
			store := &durableDedup{seen: map[string]bool{}}
			var dedup dedup.Deduplicator = store
			if forgets {
				dedup = forgetfulDedup{store}
			}
			sink, dls := deadLetters()
			cfg := runtime.ConsumerConfig{
				Agent:   agent,
				Handler: handlerFunc(func(*runtime.Ctx) error { return runtime.Reject(fmt.Errorf("poison")) }),
				Tuning: runtime.Tuning{
					Deduplicator:   dedup,
					DeadLetterSink: sink,
				},
			}
			r := start(t, tr, cfg)
			pos := plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, IdempotencyKey: "k"}, "poison")
			recv(t, dls, "failed dead letter")
			if err := r.wait(t); err == nil {
				t.Fatal("the consumer must stop")
			}
			tr.FailPublish(nil)
			// A new process with the same durable store.
			r = start(t, tr, cfg)
			if forgets {
				if dl := recv(t, dls, "dead letter after restart"); dl.PublishErr != nil {
					t.Fatal(dl.PublishErr)
				}
			}
			transporttest.Eventually(t, waitLimit, "the redelivery committed", func() bool {
				off, ok := stored(t, log, pos.Partition)
				return ok && off == pos.Offset
			})
			if err := r.shutdown(t); err != nil {
				t.Fatal(err)
			}
			capsules := len(readAll(t, log, dlq))
			if forgets && capsules != 1 {
				t.Fatalf("%d capsules, want the poison parked once", capsules)
			}
			if !forgets && capsules != 0 {
				// Without Forget the reference's behaviour stands: the
				// redelivery is a duplicate and is dropped (documented).
				t.Fatalf("%d capsules, want 0 for a store that cannot forget", capsules)
			}
		})
	}
}

func TestMiddlewareBeforeErrorRejectsWithoutRunningTheHandler(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	sink, dls := deadLetters()
	var calls atomic.Int32
	gate := &countingMiddleware{reject: errors.New("caller not authorised"), attempts: make(chan int, 1)}
	later := &countingMiddleware{}
	r := start(t, log, runtime.ConsumerConfig{
		Agent:      agent,
		Handler:    handlerFunc(func(*runtime.Ctx) error { calls.Add(1); return nil }),
		Middleware: []runtime.Middleware{gate, later},
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	pos := plain(t, log, wire.Provenance{Conversation: conv()}, "x")
	dl := recv(t, dls, "middleware rejection")
	if dl.Capsule.Reason != wire.ReasonRejected || dl.Capsule.Attempts != 0 || *dl.Capsule.Detail != "caller not authorised" {
		t.Fatalf("capsule %+v", dl.Capsule)
	}
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 || later.before.Load() != 0 || gate.after.Load() != 0 {
		t.Fatalf("handler %d, later middleware %d, after hooks %d: nothing may run after a rejection", calls.Load(), later.before.Load(), gate.after.Load())
	}
	if off, ok := stored(t, log, pos.Partition); !ok || off != pos.Offset {
		t.Fatal("the parked message must be committed")
	}
}

func TestHardStopHandlesNothingMoreEvenWhenAHandlerIgnoresItsContext(t *testing.T) {
	for _, conc := range []runtime.Concurrency{runtime.Serial, runtime.PerPartition(2), runtime.PerConversation(2)} {
		t.Run(conc.String(), func(t *testing.T) {
			log := newLog(t, 1, clock.System{})
			c := conv()
			for i := 0; i < 5; i++ {
				plain(t, log, wire.Provenance{Conversation: c}, fmt.Sprintf("m%d", i))
			}
			started, release := make(chan struct{}, 8), make(chan struct{})
			var calls atomic.Int32
			consumer, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
				Topic: topic,
				Group: agent,
				Handler: handlerFunc(func(*runtime.Ctx) error {
					calls.Add(1)
					started <- struct{}{}
					<-release // deaf to cancellation
					return nil
				}),
				Client: runtime.NewClient(log, runtime.ClientConfig{Logger: quietLogger()}),
				Tuning: runtime.Tuning{
					Concurrency: conc,
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			runThenHardStop(t, consumer, started, "first handler")
			// The old loop is still inside the handler: a second Run must wait.
			if err := consumer.Run(context.Background(), nil, nil); runtime.CodeOf(err) != runtime.CodeConfig {
				t.Fatalf("second Run while the first winds down = %v", err)
			}
			close(release)
			// Once the handler returns, the old loop ends without touching
			// the other four records.
			stopped, stopCancel := context.WithCancel(context.Background())
			stopCancel()
			transporttest.Eventually(t, waitLimit, "the old loop ended", func() bool {
				return runtime.CodeOf(consumer.Run(stopped, nil, nil)) != runtime.CodeConfig
			})
			if n := calls.Load(); n != 1 {
				t.Fatalf("%d handler calls, want 1: records after a hard stop must not be handled", n)
			}
			// The record whose handler finished after the stop was handled:
			// it is committed (the membership was kept for that), and
			// nothing past it.
			if off, ok := stored(t, log, 0); !ok || off != 0 {
				t.Fatalf("stored %d (%v), want the finished record 0 and nothing past it", off, ok)
			}
		})
	}
}

func TestWarmDedupSkipsKeysOfRecordsTheGatesRefused(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	c := conv()
	// On the log and consumed by the group: a record for another agent that
	// reuses the sender's key "k"; the live path skipped it, so "k" was
	// never marked for this agent.
	foreign := plain(t, log, wire.Provenance{Conversation: c, Agent: sender, Target: "someone-else", IdempotencyKey: "k"}, "not mine")
	sub, err := log.Join(context.Background(), topic, agent)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Commit(context.Background(), foreign.Partition, foreign.Offset); err != nil {
		t.Fatal(err)
	}
	_ = sub.Leave(context.Background())
	got := make(chan string, 2)
	start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Tuning: runtime.Tuning{
			WarmDedup: true,
		},
	})
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, Target: agent, IdempotencyKey: "k"}, "mine")
	if b := recv(t, got, "the message with the reused key"); b != "mine" {
		t.Fatalf("handled %q", b)
	}
}
