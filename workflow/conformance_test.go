package workflow_test

import (
	"testing"

	"github.com/lasergo/laser/registry/registrytest"
	"github.com/lasergo/laser/workflow/workflowtest"
)

func TestRulesOverTheEmbeddedLog(t *testing.T) { workflowtest.Run(t, registrytest.EmbeddedLog) }

func TestRulesOverTheTestServer(t *testing.T) {
	workflowtest.Run(t, registrytest.TestServer(t, "workflow_test"))
}

// TestRulesOverARealServer runs the rules against the Iggy server named by
// LASER_IGGY_ADDR, for example iggy://iggy:iggy@127.0.0.1:8090/laser_test.
func TestRulesOverARealServer(t *testing.T) { workflowtest.Run(t, registrytest.RealServer(t)) }
