package lasertest_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

type Order struct{ Cents int }

type Receipt struct{ ID string }

// charge is a request handler as lasergen dispatches it: it refuses an empty
// order, tells the ledger about a charge and answers with a receipt.
func charge(ctx *runtime.Ctx, in Order) (Receipt, error) {
	if in.Cents <= 0 {
		return Receipt{}, runtime.Failf(wire.ErrorInvalidRequest, "cannot charge %d cents", in.Cents)
	}
	body := fmt.Appendf(nil, "charged %d", in.Cents)
	if _, err := ctx.Send("ledger.commands", "ledger", body); err != nil {
		return Receipt{}, err
	}
	return Receipt{ID: "r-1"}, nil
}

// RunRequest runs one handler on one message without a log and returns its
// answer and what it sent.
func ExampleRunRequest() {
	ctx := context.Background()
	h := lasertest.Handler{Agent: "billing", Operation: "charge"}

	out, sent, err := lasertest.RunRequest(ctx, h, charge, Order{Cents: 999})
	fmt.Println(out.ID, err)
	for _, s := range sent {
		fmt.Printf("%s to %s from %s: %s\n", s.Topic, s.Message.Provenance.Target, s.Message.Provenance.Agent, s.Message.Body())
	}

	_, _, err = lasertest.RunRequest(ctx, h, charge, Order{})
	fmt.Println(runtime.CodeOf(err), runtime.IsRetryable(err), err)
	// Output:
	// r-1 <nil>
	// ledger.commands to ledger from billing: charged 999
	// rejected false cannot charge 0 cents
}

// RunStream runs a streaming handler, opening and finishing its stream as
// the generated dispatcher does, and returns the items it sent.
func ExampleRunStream() {
	words := func(_ *runtime.Ctx, in string, out *runtime.Stream[string]) error {
		for _, w := range strings.Fields(in) {
			if err := out.Send(w); err != nil {
				return err
			}
		}
		return nil
	}
	items, sent, err := lasertest.RunStream(context.Background(), lasertest.Handler{Agent: "writer"}, words, "logs are data")
	fmt.Println(items, len(sent), err)
	// Output:
	// [logs are data] 4 <nil>
}

// Dispatch drives a dispatcher (a generated XHandler(impl), here one
// written by hand in the same shape) by operation and input, and Answer
// reads back what the caller would get.
func ExampleDispatch() {
	dispatcher := runtime.HandlerFunc(func(c *runtime.Ctx) error {
		if c.Message().Operation() != "charge" {
			return c.RejectUnknownOperation("billing")
		}
		var in Order
		if err := c.Message().DecodeInput("charge", &in, wire.ContentCBOR); err != nil {
			return c.FailRequest(err)
		}
		out, err := charge(c, in)
		if err != nil {
			return c.FailRequest(err)
		}
		body, err := runtime.EncodeBody(out, wire.ContentCBOR)
		if err != nil {
			return err
		}
		return c.Respond(body, runtime.WithContentType(wire.ContentCBOR))
	})
	ctx := context.Background()
	h := lasertest.Handler{Agent: "billing", Operation: "charge"}
	sent, err := lasertest.Dispatch(ctx, h, dispatcher, Order{Cents: 250})
	receipt, aerr := lasertest.Answer[Receipt](sent)
	fmt.Println(receipt.ID, err, aerr)

	h.Operation = "teleport"
	sent, err = lasertest.Dispatch(ctx, h, dispatcher, Order{Cents: 250})
	_, aerr = lasertest.Answer[Receipt](sent)
	fmt.Println(runtime.CodeOf(err), aerr)
	// Output:
	// r-1 <nil> <nil>
	// rejected billing: agent billing has no handler for command operation "teleport" (unsupported)
}
