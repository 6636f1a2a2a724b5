package fanout_test

import (
	"testing"

	"github.com/lasergo/laser/fanout/fanouttest"
	"github.com/lasergo/laser/registry/registrytest"
)

func TestRulesOverTheEmbeddedLog(t *testing.T) { fanouttest.Run(t, registrytest.EmbeddedLog) }

func TestRulesOverTheTestServer(t *testing.T) {
	fanouttest.Run(t, registrytest.TestServer(t, "fanout_test"))
}

// TestRulesOverARealServer runs the rules against the Iggy server named by
// LASER_IGGY_ADDR, for example iggy://iggy:iggy@127.0.0.1:8090/laser_test.
func TestRulesOverARealServer(t *testing.T) { fanouttest.Run(t, registrytest.RealServer(t)) }
