package conformance

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cucumber/godog"

	"github.com/lasergo/laser/internal/featuretest"
)

// transport makes the transport one scenario runs over; each scenario gets a
// fresh one so no state leaks between scenarios.
type transport = featuretest.Transport

// feature is one .feature file of the reference and how this runner treats it.
type feature struct {
	name string
	// steps registers the feature's step definitions; nil while pending.
	steps func(sc *godog.ScenarioContext, tr transport, t *testing.T)
	// pending says which issue brings the steps, when steps is nil.
	pending string
	// outOfScope says why laser-go does not implement the feature at all.
	outOfScope string
}

// features lists every scenario file of the reference, in its order.
var features = []feature{
	{name: "agent", steps: agentSteps},
	{name: "agent_must_understand", steps: agentMustUnderstandSteps},
	{name: "provenance", steps: agentSteps},
	{name: "streaming", steps: streamingSteps},
	{name: "governance", steps: governanceSteps},
	{name: "bridges", steps: bridgesSteps},
	{name: "memory", steps: memorySteps},
	{name: "capabilities", outOfScope: "a managed Cloud surface of the reference"},
	{name: "capabilities_injected", outOfScope: "a managed Cloud surface of the reference"},
	{name: "query", outOfScope: "a managed Cloud surface of the reference"},
	{name: "kv_cas", outOfScope: "a managed Cloud surface of the reference"},
	{name: "graph", outOfScope: "a managed Cloud surface of the reference"},
	{name: "runs", outOfScope: "a managed Cloud surface of the reference"},
}

func TestConformance(t *testing.T) {
	dir := os.Getenv("LASER_BDD_DIR")
	if dir == "" {
		t.Skip("LASER_BDD_DIR is not set; `make conformance` points it at ../shared/reference-bdd")
	}
	for _, f := range features {
		if _, err := os.Stat(filepath.Join(dir, f.name+".feature")); err != nil {
			t.Fatalf("LASER_BDD_DIR=%s: %v", dir, err)
		}
	}
	for _, tr := range featuretest.Transports(t, "conformance") {
		t.Run(tr.Name, func(t *testing.T) {
			for _, f := range features {
				t.Run(f.name, func(t *testing.T) {
					switch {
					case f.outOfScope != "":
						t.Skip("out of scope: " + f.outOfScope)
					case f.steps == nil:
						t.Skip("pending: the steps come with " + f.pending)
					}
					suite := godog.TestSuite{
						Name:                f.name,
						ScenarioInitializer: func(sc *godog.ScenarioContext) { f.steps(sc, tr, t) },
						Options: &godog.Options{
							Format:   "pretty",
							Paths:    []string{filepath.Join(dir, f.name+".feature")},
							Strict:   true,
							TestingT: t,
						},
					}
					if code := suite.Run(); code != 0 {
						t.Fatalf("%s.feature over %s: godog exited %d", f.name, tr.Name, code)
					}
				})
			}
		})
	}
}
