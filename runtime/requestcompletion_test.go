package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// progressThenAnswer publishes, for every command, correlated records that
// are not answers (an event, a chunk, a non-task status, a Working task
// status), then the response, all before the command itself.
type progressThenAnswer struct {
	runtime.Transport
	t *testing.T
}

func (r *progressThenAnswer) Publish(ctx context.Context, topic string, recs ...runtime.Outgoing) ([]runtime.Position, error) {
	if topic == runtime.TopicCommands {
		cmd, err := wire.DecodeEnvelope(recs[0].Payload)
		if err != nil {
			return nil, err
		}
		corr, rec := *cmd.Correlation, wire.IDFromUint128(0xabc, 1)
		zero, op, working, card, chat := uint64(0), wire.OperationTask, wire.TaskWorking, "card", "chat"
		for _, env := range []*wire.Envelope{
			{Kind: wire.KindEvent, Record: &rec, Correlation: &corr, Body: []byte("event")},
			{Kind: wire.KindChunk, Correlation: &corr, Channel: &rec, Sequence: &zero, Operation: &chat, Body: []byte("chunk")},
			{Kind: wire.KindStatus, Record: &rec, Correlation: &corr, Operation: &card, Body: []byte("status")},
			{Kind: wire.KindStatus, Record: &rec, Correlation: &corr, Operation: &op, TaskState: &working},
			{Kind: wire.KindResponse, Record: &rec, Correlation: &corr, Body: []byte("answer")},
		} {
			env.Conversation, env.Source = cmd.Conversation, "worker"
			if err := wire.Validate(env); err != nil {
				r.t.Fatalf("%s: %v", env.Kind, err)
			}
			payload, err := env.Marshal()
			if err != nil {
				return nil, err
			}
			out := runtime.Outgoing{Key: wire.PartitionKey(env.Conversation), Headers: wire.EnvelopeHeaders(env, wire.ContentRaw), Payload: payload}
			if _, err := r.Transport.Publish(ctx, runtime.TopicResponses, out); err != nil {
				return nil, err
			}
		}
	}
	return r.Transport.Publish(ctx, topic, recs...)
}

// TestRequestCompletesOnlyOnAnAnswerNotOnOtherCorrelatedRecords pins the
// documented rule: a request (like a contract) completes on a plain reply,
// an AGDX response or an AGDX error; events, chunks and statuses carrying
// its correlation are progress and do not complete it.
func TestRequestCompletesOnlyOnAnAnswerNotOnOtherCorrelatedRecords(t *testing.T) {
	c := newClient(t, &progressThenAnswer{Transport: embedlog.New("laser", embedlog.Config{}), t: t}, clock.System{}, nil)
	reply, err := c.Request(context.Background(), runtime.Out{From: "caller", Target: "worker", Body: []byte("q")}, runtime.WithTimeout(waitLimit))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Envelope == nil || reply.Envelope.Kind != wire.KindResponse || string(reply.Body()) != "answer" {
		t.Fatalf("completed by %v %q, want the response", reply.Envelope.Kind, reply.Body())
	}
	r, err := c.SendContract(context.Background(), runtime.Contract{Out: runtime.Out{From: "caller", Target: "worker", Body: []byte("q")}, Deadline: waitLimit})
	if err != nil {
		t.Fatal(err)
	}
	if r.Err() != nil || string(r.Reply.Body()) != "answer" || !r.Consumed {
		t.Fatalf("contract %v reply %q consumed %v", r.Err(), r.Reply.Body(), r.Consumed)
	}
}

// answerRace answers every command before publishing it, and closes
// delivered once the client's reply reader has handed the answer to its
// waiter: the reader's next read after the one that returned the answer.
type answerRace struct {
	runtime.Transport
	t         *testing.T
	mu        sync.Mutex
	read      bool // a read returned the answer
	delivered chan struct{}
}

func (r *answerRace) Publish(ctx context.Context, topic string, recs ...runtime.Outgoing) ([]runtime.Position, error) {
	if topic == runtime.TopicCommands {
		cmd, err := wire.DecodeEnvelope(recs[0].Payload)
		if err != nil {
			return nil, err
		}
		rec := wire.IDFromUint128(0xabc, 2)
		env := &wire.Envelope{Kind: wire.KindResponse, Record: &rec, Correlation: cmd.Correlation, Conversation: cmd.Conversation, Source: "worker", Body: []byte("answer")}
		payload, err := env.Marshal()
		if err != nil {
			return nil, err
		}
		if _, err := r.Transport.Publish(ctx, runtime.TopicResponses, runtime.Outgoing{Key: wire.PartitionKey(env.Conversation),
			Headers: wire.EnvelopeHeaders(env, wire.ContentRaw), Payload: payload}); err != nil {
			return nil, err
		}
	}
	return r.Transport.Publish(ctx, topic, recs...)
}

func (r *answerRace) ReadRange(ctx context.Context, topic string, p uint32, from uint64, n int) ([]runtime.Incoming, error) {
	r.mu.Lock()
	if r.read {
		r.read = false
		close(r.delivered)
	}
	r.mu.Unlock()
	recs, err := r.Transport.ReadRange(ctx, topic, p, from, n)
	if topic == runtime.TopicResponses && len(recs) > 0 {
		r.mu.Lock()
		r.read = r.delivered != nil && !isClosed(r.delivered)
		r.mu.Unlock()
	}
	return recs, err
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// cancelOnWait is a clock whose wait of raceWait cancels the request's
// context once the answer has reached its waiter, so the request sees both
// at once.
type cancelOnWait struct {
	clock.System
	delivered <-chan struct{}
	cancel    context.CancelFunc
}

const raceWait = 47 * time.Second

func (c *cancelOnWait) After(d time.Duration) <-chan time.Time {
	if d == raceWait {
		<-c.delivered
		c.cancel()
	}
	return c.System.After(d)
}

// TestRequestAnsweredBeforeItsCancellationIsAnswered: when the answer is
// already at the waiter as the caller's context ends (a fan-out branch
// cancelled as its answer lands), the request reports the answer, as it
// does when the answer races the timeout. Both are ready at once, so a
// request choosing between them would report the cancellation about half
// the time: 32 rounds all answered.
func TestRequestAnsweredBeforeItsCancellationIsAnswered(t *testing.T) {
	for round := range 32 {
		tr := &answerRace{Transport: embedlog.New("laser", embedlog.Config{}), t: t, delivered: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		c := newClient(t, tr, &cancelOnWait{delivered: tr.delivered, cancel: cancel}, nil)
		reply, err := c.Request(ctx, runtime.Out{From: "caller", Target: "worker", Body: []byte("q")}, runtime.WithTimeout(raceWait))
		cancel()
		if err != nil || string(reply.Body()) != "answer" {
			t.Fatalf("round %d: %v, %v; want the answer that arrived before the cancellation", round, reply, err)
		}
	}
}
