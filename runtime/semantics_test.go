package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// Semantics of the reference that a port easily gets wrong, each pinned.

func TestStaleFenceRecordIsDroppedAndCommitted(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	got := make(chan string, 4)
	r := start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
	})
	c := conv()
	fence := func(n uint64) *uint64 { return &n }
	plain(t, log, wire.Provenance{Conversation: c, Fence: fence(7)}, "holder 7")
	recv(t, got, "holder 7")
	stale := plain(t, log, wire.Provenance{Conversation: c, Fence: fence(6)}, "stale holder 6")
	eventually(t, "the stale record committed", func() bool {
		off, ok := stored(t, log, stale.Partition)
		return ok && off == stale.Offset
	})
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 || len(readAll(t, log, dlq)) != 0 {
		t.Fatal("a stale fence is dropped: neither handled nor dead-lettered")
	}
}

func TestExpiredDuplicateIsDroppedAndCommittedNotDeadLettered(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	sink, dls := deadLetters()
	got := make(chan string, 4)
	r := start(t, log, runtime.ConsumerConfig{
		Agent:   agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error { got <- string(c.Message().Body()); return nil }),
		Client:  runtime.NewClient(log, runtime.ClientConfig{Clock: clock}),
		Tuning: runtime.Tuning{
			DeadLetterSink: sink,
		},
	})
	c := conv()
	future, past := uint64(epoch.Add(time.Hour).UnixMicro()), uint64(epoch.Add(-time.Second).UnixMicro())
	plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "order-9", Deadline: &future}, "original")
	recv(t, got, "original")
	dup := plain(t, log, wire.Provenance{Conversation: c, Agent: sender, IdempotencyKey: "order-9", Deadline: &past}, "expired duplicate")
	eventually(t, "the expired duplicate committed", func() bool {
		off, ok := stored(t, log, dup.Partition)
		return ok && off == dup.Offset
	})
	if err := r.shutdown(t); err != nil {
		t.Fatal(err)
	}
	select {
	case dl := <-dls:
		t.Fatalf("the expired duplicate was dead-lettered as %s; dedup drops it before the deadline check", dl.Capsule.Reason)
	default:
	}
	if len(got) != 0 {
		t.Fatal("the duplicate was handled")
	}
}

func TestPlainReplyDropsTheIdempotencyKeyTargetsTheSenderAndSetsTheCausalParent(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	log := newLog(t, 1, clock)
	start(t, log, runtime.ConsumerConfig{
		Agent:        agent,
		RespondTopic: resp,
		Handler:      handlerFunc(func(c *runtime.Ctx) error { return c.Respond([]byte("done")) }),
		Client:       runtime.NewClient(log, runtime.ClientConfig{Clock: clock}),
	})
	c, parent, root := conv(), conv(), conv()
	deadline, fence := uint64(epoch.Add(time.Hour).UnixMicro()), uint64(4)
	handled := plain(t, log, wire.Provenance{Conversation: c, ParentConversation: &parent, RootConversation: &root,
		Agent: sender, IdempotencyKey: "job-1", Correlation: "corr-1", Deadline: &deadline, Fence: &fence}, "do it")
	var replies []runtime.Incoming
	eventually(t, "the reply", func() bool { replies = readAll(t, log, resp); return len(replies) == 1 })
	p, err := wire.DecodeProvenance(replies[0].Headers)
	if err != nil {
		t.Fatal(err)
	}
	want := wire.Provenance{Conversation: c, RootConversation: &root, Agent: agent, Target: sender, Correlation: "corr-1",
		CausalParent: &wire.MessageID{Partition: handled.Partition, Offset: handled.Offset}}
	if p.Conversation != want.Conversation || *p.RootConversation != root || p.Agent != agent || p.Target != sender ||
		p.Correlation != "corr-1" || *p.CausalParent != *want.CausalParent ||
		p.IdempotencyKey != "" || p.Deadline != nil || p.Fence != nil || p.ParentConversation != nil {
		t.Fatalf("reply provenance %+v, want %+v", p, want)
	}
	if string(replies[0].Payload) != "done" {
		t.Fatalf("reply %q", replies[0].Payload)
	}
}

// waitForTimers waits until n timers exactly d away are pending.
func waitForTimers(t *testing.T, clock *lasertest.ManualClock, d time.Duration, n int) {
	t.Helper()
	eventually(t, "pending timers", func() bool {
		return len(slices.DeleteFunc(clock.Timers(), func(p time.Duration) bool { return p != d })) >= n
	})
}

func TestDeadLetteredCommandEndsItsContractTimedOut(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	c := newClient(t, embedlog.New("laser", embedlog.Config{Clock: clock}), clock, nil)
	sink, dls := deadLetters()
	runAgent(t, c, runtime.AgentConfig{ID: "strict", Respond: runtime.TopicResponses,
		Tuning:  runtime.Tuning{AckOnPickup: true, DeadLetterSink: sink},
		Handler: handlerFunc(func(*runtime.Ctx) error { return runtime.Reject(fmt.Errorf("no")) })})
	res := make(chan *runtime.ContractResult, 1)
	go func() {
		r, err := c.SendContract(context.Background(), runtime.Contract{
			Out: runtime.Out{From: "boss", Target: "strict", Body: []byte("x")}, Deadline: 10 * time.Second})
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	if dl := recv(t, dls, "dead letter"); dl.Capsule.Reason != wire.ReasonRejected {
		t.Fatalf("capsule %s", dl.Capsule.Reason)
	}
	// The deadline timer, armed again once the pickup ack was seen: no
	// answer is ever sent for a dead-lettered command.
	waitForTimers(t, clock, 10*time.Second, 2)
	clock.Advance(10 * time.Second)
	r := recv(t, res, "contract result")
	if !r.Consumed || r.Reply != nil || runtime.CodeOf(r.Err()) != runtime.CodeTimeout {
		t.Fatalf("result %+v err %v", r, r.Err())
	}
}

func TestSignedSlowWorkerContractCompletesPastItsExpiry(t *testing.T) {
	clock := lasertest.NewManualClock(epoch)
	key := newKey(21)
	reg := sign.NewRegistry()
	if err := reg.Enroll("worker", key.Public()); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, embedlog.New("laser", embedlog.Config{Clock: clock}), clock, reg)
	picked, release := make(chan struct{}, 1), make(chan struct{})
	runAgent(t, c, runtime.AgentConfig{ID: "worker", Respond: runtime.TopicResponses,
		SigningKey: key,
		Tuning:     runtime.Tuning{AckOnPickup: true},
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			picked <- struct{}{}
			<-release
			return ctx.Respond([]byte("slow but done"))
		})})
	res := make(chan *runtime.ContractResult, 1)
	go func() {
		r, err := c.SendContract(context.Background(), runtime.Contract{
			Out: runtime.Out{From: "boss", Target: "worker", Body: []byte("x")}, Expiry: time.Second, Deadline: 10 * time.Second})
		if err != nil {
			t.Error(err)
		}
		res <- r
	}()
	recv(t, picked, "pickup")
	// The verified Working ack is seen: the contract now waits for its
	// deadline alone. Let the expiry pass while the worker is still busy.
	waitForTimers(t, clock, 10*time.Second, 1)
	clock.Advance(2 * time.Second)
	close(release)
	r := recv(t, res, "contract result")
	if r.Err() != nil || !r.Consumed || string(r.Reply.Body()) != "slow but done" || r.Reply.VerifiedPrincipal != "worker" {
		t.Fatalf("result %+v", r)
	}
}

// eventually polls cond until it holds or the wait limit passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	transporttest.Eventually(t, waitLimit, what, cond)
}
