package lasertest_test

import (
	"context"
	"fmt"

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
