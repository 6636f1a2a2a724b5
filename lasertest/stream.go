package lasertest

import (
	"context"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// RunStream is Run for a streaming handler (the method shape
// func(*runtime.Ctx, In, *runtime.Stream[Item]) error): it opens the stream
// and finishes it as the generated dispatcher does, and returns the items
// the handler sent, decoded from its chunks in order, with every record it
// published (the chunks, and the AGDX error that ends a failed stream). A
// failing handler's error comes back as the rejection the consumer would
// park, except a runtime.Failf, the handler's answer: err is then nil, as
// the consumer commits it.
func RunStream[In, Item any](ctx context.Context, h Handler, handler func(*runtime.Ctx, In, *runtime.Stream[Item]) error, in In) (items []Item, sent []Sent, err error) {
	h = h.withDefaults()
	err = h.run(ctx, in, &sent, func(c *runtime.Ctx) error {
		out, err := runtime.OpenTypedStream[Item](c, h.ContentType)
		if err != nil {
			return err
		}
		return out.Finish(handler(c, in, out))
	})
	for _, s := range sent {
		if s.Message.Kind() != wire.KindChunk || len(s.Message.Body()) == 0 {
			continue
		}
		var item Item
		if derr := s.Message.Decode(&item, h.ContentType); derr != nil {
			return items, sent, derr
		}
		items = append(items, item)
	}
	return items, sent, err
}
