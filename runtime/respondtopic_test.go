package runtime_test

import (
	"context"
	"testing"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

func TestRespondWithAReplyTopicAnswersAnInputRequestWithASignedResponse(t *testing.T) {
	key := newKey(31)
	reg := sign.NewRegistry()
	if err := reg.Enroll("approver", key.Public()); err != nil {
		t.Fatal(err)
	}
	log := embedlog.New("laser", embedlog.Config{})
	c := newClient(t, log, clock.System{}, reg)
	if err := log.EnsureTopics(context.Background(), 1, "agent.human_input", "decisions"); err != nil {
		t.Fatal(err)
	}
	runAgent(t, c, runtime.AgentConfig{ID: "approver", Listen: "agent.human_input",
		SigningKey: key,
		Handler: handlerFunc(func(ctx *runtime.Ctx) error {
			return ctx.Respond([]byte("approved: "+string(ctx.Message().Body())), runtime.WithReplyTopic("decisions"))
		})})
	reply, err := c.Request(context.Background(), runtime.Out{Topic: "agent.human_input", From: "gatekeeper", Target: "approver", Body: []byte("refund 40")},
		runtime.WithReplyTopic("decisions"), runtime.WithTimeout(waitLimit))
	if err != nil {
		t.Fatal(err)
	}
	if reply.Envelope == nil || reply.Envelope.Kind != wire.KindResponse || string(reply.Body()) != "approved: refund 40" || reply.VerifiedPrincipal != "approver" {
		t.Fatalf("reply %+v body %q principal %q", reply.Envelope, reply.Body(), reply.VerifiedPrincipal)
	}
}

// TestRespondWithAReplyTopicAnswersAPlainMessageThere: the topic an answer
// goes to is an option of Respond, not a verb of its own, so a plain
// message is answered with a plain message on the named topic.
func TestRespondWithAReplyTopicAnswersAPlainMessageThere(t *testing.T) {
	log := newLog(t, 1, clock.System{})
	if err := log.EnsureTopics(context.Background(), 1, "decisions"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	start(t, log, runtime.ConsumerConfig{
		Agent: agent,
		Handler: handlerFunc(func(c *runtime.Ctx) error {
			err := c.Respond([]byte("yes"), runtime.WithReplyTopic("decisions"))
			errs <- err
			return nil
		}),
		Tuning: runtime.Tuning{
			Retry: runtime.RetryPolicy{MaxAttempts: 1},
		},
	})
	plain(t, log, wire.Provenance{Conversation: conv(), Agent: sender, Correlation: "c-1"}, "approve?")
	if err := recv(t, errs, "Respond result"); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, log, "decisions")
	if len(recs) != 1 || string(recs[0].Payload) != "yes" {
		t.Fatalf("%d records on decisions, want the plain answer", len(recs))
	}
	if recs := readAll(t, log, resp); len(recs) != 0 {
		t.Fatalf("%d records on the respond topic, want none", len(recs))
	}
}
