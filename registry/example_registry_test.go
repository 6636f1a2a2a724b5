package registry_test

import (
	"context"
	"fmt"

	"github.com/lasergo/laser/internal/examplerig"
	"github.com/lasergo/laser/registry"
)

// Agents publish capability cards as they start; a Registry folds them and
// a Route picks agents by what they can do.
func ExampleRegistry_Resolve() {
	ctx := context.Background()
	rig := examplerig.Start(ctx,
		examplerig.Agent{ID: "rev-ana", Skills: []string{"review"}, Answer: examplerig.Says("lgtm")},
		examplerig.Agent{ID: "rev-bo", Skills: []string{"review", "translate"}, Answer: examplerig.Says("ok")},
	)
	defer rig.Close()

	reg := registry.New(rig.Client.Transport(), registry.Config{})
	if err := reg.Refresh(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for _, route := range []registry.Route{
		registry.ToCapable("review", registry.Any),
		registry.AllCapable("review"),
		registry.AllCapable("translate"),
		registry.ToCapable("juggle", registry.Any),
	} {
		agents, err := reg.Resolve(route)
		fmt.Println(route, agents, err)
	}
	// Output:
	// to one capable of review [rev-ana] <nil>
	// to all capable of review [rev-ana rev-bo] <nil>
	// to all capable of translate [rev-bo] <nil>
	// to one capable of juggle [] registry: no capable agent for skill "juggle"
}
