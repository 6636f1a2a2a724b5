package memory

import (
	"fmt"

	"github.com/lasergo/laser/runtime"
)

// Recalled is what a generated handler that takes one receives: the items
// recalled for the message it handles, best first.
type Recalled []Item

// Block renders the recalled items for a prompt within budget tokens, as
// ContextBlock does with EstimateTokens.
func (r Recalled) Block(budget int) string { return ContextBlock(r, budget, nil) }

// Source is what an agent whose generated handlers take Recalled
// implements: the memory they recall from.
type Source interface {
	Memory() *Store
}

// RecallFor recalls for the message a handler is handling, the way the
// dispatch lasergen generates does for a Recalled parameter: from the
// message's conversation (and the durable items), by q. A q without text
// takes the handler's input as its text: its String method, the string or
// bytes it is, or else the message body.
func RecallFor(c *runtime.Ctx, mem *Store, in any, q Query) (Recalled, error) {
	if mem == nil {
		return nil, &runtime.Error{Code: runtime.CodeHandlerConfig, Msg: "memory: the agent's Memory method returned no Store"}
	}
	if q.Text == "" && q.Strategy != Recent {
		q.Text = queryText(in, c.Message().Body())
	}
	items, err := mem.Recall(c, Scope{Conversation: c.Message().Provenance.Conversation}, q)
	return Recalled(items), err
}

// queryText is the text a handler's input stands for.
func queryText(in any, body []byte) string {
	switch v := in.(type) {
	case fmt.Stringer:
		return v.String()
	case string:
		return v
	case *string:
		return *v
	case []byte:
		return string(v)
	}
	return string(body)
}
