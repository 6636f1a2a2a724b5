package runtime

import "github.com/lasergo/laser/wire"

// RespondInput answers the handled input request (an AGDX command asking a
// person or an approver for a decision) with an AGDX response carrying
// decision, on topic: same conversation and correlation, from this agent,
// signed when the agent has a signing key. It fails with CodeHandlerConfig
// when the handled message is not an AGDX envelope with a correlation or
// the agent has no id.
func (c *Ctx) RespondInput(topic string, decision []byte, opts ...ReplyOption) error {
	if env := c.msg.Envelope; env == nil || env.Correlation == nil {
		return &Error{Code: CodeHandlerConfig, Msg: "responding to input needs an AGDX request with a correlation"}
	}
	return c.postAnswer(topic, wire.KindResponse, decision, specOf(opts, ReplyOption.applyReply), wire.ContentRaw)
}
