package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lasergo/laser/bridge"
	"github.com/lasergo/laser/deadletter"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/sign"
	"github.com/lasergo/laser/wire"
)

// refusalWait bounds the look for a dead letter after a call went
// unanswered: the call's own deadline has passed by then.
const refusalWait = 5 * time.Second

// refusal says why the agent left the call unanswered when it dead-lettered
// it (an agent that verifies what it handles parks an unsigned call and
// answers nothing), or "" when no dead letter of the call's conversation
// says so. Under the client's verifier only a capsule signed by the agent
// that parked it counts.
func (c *call) refusal(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refusalWait)
	defer cancel()
	topic := c.b.cfg.DeadLetterTopic
	h, err := bridge.Read(ctx, c.b.client.Transport(), c.conv, topic)
	if err != nil {
		return ""
	}
	for _, m := range h {
		capsule, ok := c.capsule(topic, m)
		if !ok {
			continue
		}
		why := capsule.Reason.String()
		if capsule.Detail != nil {
			why += ": " + *capsule.Detail
		}
		agent := c.t.op.Agent
		if v, ok := m.Headers.Get(runtime.HeaderDeadLetterBy); ok {
			if by, err := v.AsString(); err == nil && by != "" {
				agent = by
			}
		}
		msg := fmt.Sprintf("agent %s dead-lettered the call (%s)", agent, why)
		if c.b.cfg.Key == nil && strings.Contains(why, "signature") {
			msg += fmt.Sprintf("; the call went unsigned and agent %s verifies signatures: give the bridge a signing key (Config.Key; laser mcp --key FILE)", agent)
		}
		return msg
	}
	return ""
}

// capsule is m's dead-letter capsule when it is one the bridge may believe:
// any capsule without a verifier, else one whose signature verifies.
func (c *call) capsule(topic string, m *runtime.Message) (*wire.DeadLetter, bool) {
	v := c.b.client.Verifier()
	if v == nil {
		d, err := wire.DecodeDeadLetter(m.Payload)
		return d, err == nil
	}
	keys, ok := v.(*sign.Registry)
	if !ok {
		return nil, false
	}
	rec := &runtime.Incoming{Position: m.Position, Timestamp: m.Timestamp, Headers: m.Headers, Payload: m.Payload}
	_, d, err := deadletter.Verify(keys, topic, rec)
	return d, err == nil
}
