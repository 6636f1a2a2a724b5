package memory

import (
	"github.com/lasergo/laser/runtime"
)

// Remembering wraps a handler so that each message it handles successfully
// is remembered as kind under the message's conversation (and its sender as
// agent). What is remembered is the record payload verbatim, the encoded
// envelope for an AGDX message, as the reference does. A failed memory write
// is logged and dropped: the message was handled, and retrying it would
// repeat the handler's effects.
func Remembering(h runtime.Handler, mem *Store, kind Kind) runtime.Handler {
	return runtime.HandlerFunc(func(c *runtime.Ctx) error {
		if err := h.Handle(c); err != nil {
			return err
		}
		m := c.Message()
		scope := Scope{Conversation: m.Provenance.Conversation, Agent: m.Provenance.Agent}
		if _, err := mem.Remember(c, scope, kind, m.Payload); err != nil {
			mem.log.Warn("memory: remembering a handled message failed; dropped", "topic", m.Topic, "position", m.Position.String(), "error", err)
		}
		return nil
	})
}
