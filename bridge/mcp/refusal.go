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
// answers nothing), or "" when no dead letter says so. Only a capsule that
// parked this call's own command counts, and under the client's verifier
// only one signed by the agent called.
func (c *call) refusal(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refusalWait)
	defer cancel()
	topic := c.b.cfg.DeadLetterTopic
	h, err := bridge.Read(ctx, c.b.client.Transport(), c.conv, topic)
	if err != nil {
		return ""
	}
	agent := c.t.op.Agent
	for _, m := range h {
		capsule, ok := c.capsule(topic, m)
		if !ok {
			continue
		}
		why := capsule.Reason.String()
		if capsule.Detail != nil {
			why += ": " + *capsule.Detail
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
// it was parked by the agent called (its by header, when set, names it)
// and parked this call's command; without a verifier that is all, with one
// its signature must verify too. The signature covers the parking agent
// and the parked bytes but not the conversation header the capsule is
// filed under, so a genuine capsule replayed under this call's
// conversation is told apart by the command it parked.
func (c *call) capsule(topic string, m *runtime.Message) (*wire.DeadLetter, bool) {
	if v, ok := m.Headers.Get(runtime.HeaderDeadLetterBy); ok {
		if by, err := v.AsString(); err != nil || by != c.t.op.Agent {
			return nil, false
		}
	}
	var d *wire.DeadLetter
	var err error
	switch v := c.b.client.Verifier().(type) {
	case nil:
		d, err = wire.DecodeDeadLetter(m.Payload)
	case *sign.Registry:
		rec := &runtime.Incoming{Position: m.Position, Timestamp: m.Timestamp, Headers: m.Headers, Payload: m.Payload}
		_, d, err = deadletter.Verify(v, topic, rec)
	default:
		return nil, false
	}
	if err != nil || !c.parkedCommand(d) {
		return nil, false
	}
	return d, true
}

// parkedCommand says whether the capsule parked this call's command: an
// AGDX command of the call's conversation (minted for this call alone),
// from the bridge to the agent called.
func (c *call) parkedCommand(d *wire.DeadLetter) bool {
	env, err := wire.DecodeEnvelope(d.Payload)
	if err != nil {
		return false
	}
	return env.Kind == wire.KindCommand && env.Conversation == c.conv &&
		string(env.Source) == c.b.cfg.ID && env.Target != nil && string(*env.Target) == c.t.op.Agent
}
