package humaninput_test

import (
	"testing"

	"github.com/lasergo/laser/internal/featuretest"
)

func TestRulesOverTheEmbeddedLog(t *testing.T) { featuretest.HumanInput(t, featuretest.EmbeddedLog) }

func TestRulesOverTheTestServer(t *testing.T) {
	featuretest.HumanInput(t, featuretest.TestServer(t, "humaninput_test"))
}

// TestRulesOverARealServer runs the rules against the Iggy server named by
// LASER_IGGY_ADDR, for example iggy://iggy:iggy@127.0.0.1:8090/laser_test.
func TestRulesOverARealServer(t *testing.T) { featuretest.HumanInput(t, featuretest.RealServer(t)) }
