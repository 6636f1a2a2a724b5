package runtime_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/memlog"
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
	c := newClient(t, &progressThenAnswer{Transport: memlog.New("laser"), t: t}, runtime.SystemClock{}, nil)
	reply, err := c.Request(context.Background(), runtime.Command{From: "caller", Target: "worker", Body: []byte("q")}, runtime.WithTimeout(waitLimit))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Envelope == nil || reply.Envelope.Kind != wire.KindResponse || string(reply.Body()) != "answer" {
		t.Fatalf("completed by %v %q, want the response", reply.Envelope.Kind, reply.Body())
	}
	r, err := c.SendContract(context.Background(), runtime.Contract{Command: runtime.Command{From: "caller", Target: "worker", Body: []byte("q")}, Deadline: waitLimit})
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != runtime.Completed || string(r.Reply.Body()) != "answer" || !r.Consumed {
		t.Fatalf("contract %v reply %q consumed %v", r.Outcome, r.Reply.Body(), r.Consumed)
	}
}
