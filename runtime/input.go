package runtime

import "github.com/lasergo/laser/wire"

// RespondInput answers the handled input request (an AGDX command asking a
// person or an approver for a decision) with an AGDX response carrying
// decision, on topic: same conversation and correlation, from this agent,
// signed when the agent has a signing key. It fails with ErrHandlerConfig
// when the handled message is not an AGDX envelope with a correlation or
// the agent has no id.
func (c *Ctx) RespondInput(topic string, decision []byte, opts ...SendOption) error {
	if env := c.msg.Envelope; env == nil || env.Correlation == nil {
		return &Error{Code: CodeHandlerConfig, Msg: "responding to input needs an AGDX request with a correlation"}
	}
	spec := buildSpec(opts)
	resp, err := c.answer(wire.KindResponse, decision)
	if err != nil {
		return err
	}
	_, err = c.c.prod.SendEnvelope(c, topic, resp, spec.ct(wire.ContentRaw), c.c.cfg.SigningKey)
	return err
}
