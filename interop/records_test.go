package interop

import (
	"testing"

	"github.com/lasergo/laser/runtime"
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
