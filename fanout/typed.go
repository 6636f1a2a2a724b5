package fanout

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// TypedReply is one branch's decoded answer.
type TypedReply[Out any] struct {
	Agent string
	Value Out
}

// TypedGather is a fan-out's outcome with decoded replies; a reply that does
// not decode is a failure of its branch.
type TypedGather[Out any] struct {
	OK        []TypedReply[Out]
	Failures  []Failure
	Cancelled []string
}

// Call fans operation op out like Send, with in encoded as ct (the way the
// generated clients encode an operation's input) and each reply decoded
// into Out.
func Call[Out any](ctx context.Context, c *runtime.Client, reg *registry.Registry, req Request, op string, ct wire.ContentType, in any, policy Policy, opts ...runtime.Option) (*TypedGather[Out], error) {
	body, err := runtime.EncodeBody(in, ct)
	if err != nil {
		return nil, fmt.Errorf("fanout: %s: %w", op, err)
	}
	req.Body = body
	g, err := Send(ctx, c, reg, req, policy, append([]runtime.Option{runtime.WithOperation(op), runtime.WithContentType(ct)}, opts...)...)
	if err != nil {
		return nil, err
	}
	tg := &TypedGather[Out]{Failures: g.Failures, Cancelled: g.Cancelled}
	for _, r := range g.OK {
		var out Out
		if err := r.Message.Decode(&out, ct); err != nil {
			tg.Failures = append(tg.Failures, Failure{Agent: r.Agent, Err: fmt.Errorf("reply to %s: %w", op, err)})
			continue
		}
		tg.OK = append(tg.OK, TypedReply[Out]{Agent: r.Agent, Value: out})
	}
	return tg, nil
}
