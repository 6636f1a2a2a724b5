package transporttest

import (
	"testing"

	"github.com/lasergo/laser/runtime"
)

// scenarioRequestPicksUpALateReplyTopic sends a request whose reply topic
// does not exist yet: the request is published anyway, and the reply that
// creates the topic completes it (the reference re-resolves the topic on
// every pass, because a fan-out reply topic is created by its first reply).
func scenarioRequestPicksUpALateReplyTopic(t *testing.T, tr runtime.Transport) {
	w := newWorld(t, tr, 1)
	replies := freshName(t, "late-replies")
	client := w.client()
	k := w.start(tr, func(c *runtime.ConsumerConfig) {
		c.Client = client
		c.RespondTopic = replies
		c.Handler = runtime.HandlerFunc(func(ctx *runtime.Ctx) error {
			if err := tr.EnsureTopics(ctx, 2, replies); err != nil {
				return err
			}
			return ctx.Respond(append([]byte("re: "), ctx.Message().Body()...))
		})
	})
	reply, err := client.Request(w.ctx, runtime.Out{Topic: w.topic, From: "caller", Body: []byte("ping")},
		runtime.WithReplyTopic(replies), runtime.WithTimeout(Within))
	if err != nil {
		t.Fatalf("request with a reply topic that does not exist yet: %v", err)
	}
	if string(reply.Body()) != "re: ping" {
		t.Fatalf("reply %q", reply.Body())
	}
	if err := w.shutdown(k); err != nil {
		t.Fatal(err)
	}
}
