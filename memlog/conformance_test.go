package memlog_test

import (
	"testing"

	"github.com/lasergo/laser/memlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
)

func TestTransportConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) runtime.Transport { return memlog.New("laser") })
}

func TestReliableConsumerScenarios(t *testing.T) {
	transporttest.RunConsumer(t, func(t *testing.T) runtime.Transport { return memlog.New("laser") })
}

func TestStreamScenarios(t *testing.T) {
	transporttest.RunStream(t, func(t *testing.T) runtime.Transport { return memlog.New("laser") })
}
