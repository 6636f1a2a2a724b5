package govern_test

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/effect"
	"github.com/lasergo/laser/govern"
)

// A panel of two voters where legal must agree, behind a swappable policy.
func ExamplePanel() {
	ctx := context.Background()
	risk := govern.GovernorFunc(func(context.Context, *govern.Action) (govern.Decision, error) { return govern.Allow(), nil })
	legal := govern.GovernorFunc(func(_ context.Context, a *govern.Action) (govern.Decision, error) {
		if a.Topic == "payments" {
			return govern.Block("needs a contract"), nil
		}
		return govern.Allow(), nil
	})
	panel := &govern.Panel{Need: 1, Voters: []govern.Voter{{Name: "risk", Governor: risk}, {Name: "legal", Governor: legal, Mandatory: true}}}
	policy, _ := govern.NewSwappable(panel)

	d, _ := policy.Decide(ctx, &govern.Action{Kind: effect.Publish, Topic: "payments"})
	fmt.Println(d.Verdict, "-", d.Reason)
	_, _ = policy.Swap(risk)
	d, _ = policy.Decide(ctx, &govern.Action{Kind: effect.Publish, Topic: "payments"})
	fmt.Println(d.Verdict)
	// Output:
	// block - risk: allow; legal: block (needs a contract)
	// allow
}
