package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// answersTwice publishes two plain answers to every command before the
// command itself, so the reply reader finds both in one read pass.
type answersTwice struct {
	runtime.Transport
}

func (r *answersTwice) Publish(ctx context.Context, topic string, recs ...runtime.Outgoing) ([]runtime.Position, error) {
	if topic == runtime.TopicCommands {
		env, err := wire.DecodeEnvelope(recs[0].Payload)
		if err != nil {
			return nil, err
		}
		prov := wire.Provenance{Conversation: env.Conversation, Agent: "twice", Correlation: env.Correlation.String()}
		headers, _ := prov.Headers()
		for _, body := range []string{"first", "second"} {
			if _, err := r.Transport.Publish(ctx, runtime.TopicResponses, runtime.Outgoing{Key: prov.PartitionKey(), Headers: headers, Payload: []byte(body)}); err != nil {
				return nil, err
			}
		}
	}
	return r.Transport.Publish(ctx, topic, recs...)
}

func TestContractWithTwoAnswersInOneReadPassReturnsTheFirstAndNeverHangs(t *testing.T) {
	c := newClient(t, &answersTwice{Transport: embedlog.New("laser", embedlog.Config{})}, clock.System{}, nil)
	const contracts = 20
	type result struct {
		r   *runtime.ContractResult
		err error
	}
	results := make(chan result, contracts)
	for range contracts {
		go func() {
			r, err := c.SendContract(context.Background(), runtime.Contract{
				Out: runtime.Out{From: "boss", Target: "twice", Body: []byte("x")}, Deadline: time.Hour})
			results <- result{r, err}
		}()
	}
	for i := range contracts {
		res := recv(t, results, fmt.Sprintf("contract %d of %d", i+1, contracts))
		if res.err != nil {
			t.Fatal(res.err)
		}
		if res.r.Err() != nil || string(res.r.Reply.Body()) != "first" {
			t.Fatalf("err %v reply %q, want the first answer", res.r.Err(), res.r.Reply.Body())
		}
	}
}

func TestRequestWithTwoAnswersReturnsTheFirst(t *testing.T) {
	c := newClient(t, &answersTwice{Transport: embedlog.New("laser", embedlog.Config{})}, clock.System{}, nil)
	for range 20 {
		reply, err := c.Request(context.Background(), runtime.Out{From: "boss", Target: "twice", Body: []byte("x")}, runtime.WithTimeout(waitLimit))
		if err != nil {
			t.Fatal(err)
		}
		if string(reply.Body()) != "first" {
			t.Fatalf("reply %q, want the first answer", reply.Body())
		}
	}
}

func TestContractOfAnAgentThatRespondsTwiceCompletes(t *testing.T) {
	c := newClient(t, embedlog.New("laser", embedlog.Config{}), clock.System{}, nil)
	runAgent(t, c, runtime.AgentConfig{ID: "chatty", Respond: runtime.TopicResponses,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			if err := ctx.Respond([]byte("one")); err != nil {
				return err
			}
			return ctx.Respond([]byte("two"))
		})})
	results := make(chan *runtime.ContractResult, 20)
	for range 20 {
		go func() {
			r, err := c.SendContract(context.Background(), runtime.Contract{
				Out: runtime.Out{From: "boss", Target: "chatty", Body: []byte("x")}, Deadline: time.Hour})
			if err != nil {
				t.Error(err)
			}
			results <- r
		}()
	}
	for range 20 {
		if r := recv(t, results, "contract result"); r == nil || r.Err() != nil || string(r.Reply.Body()) != "one" {
			t.Fatalf("result %+v", r)
		}
	}
}

func TestContractWithoutASenderIsInvalid(t *testing.T) {
	c := newClient(t, embedlog.New("laser", embedlog.Config{}), clock.System{}, nil)
	_, err := c.SendContract(context.Background(), runtime.Contract{Out: runtime.Out{Target: "billing", Body: []byte("x")}})
	if runtime.CodeOf(err) != runtime.CodeInvalid || runtime.CodeOf(err) == runtime.CodeConfig {
		t.Fatalf("err = %v, want a CodeInvalid error", err)
	}
}
