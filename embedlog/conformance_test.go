package embedlog_test

import (
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/runtime/transporttest"
)

func TestTransportConformance(t *testing.T) {
	transporttest.Run(t, func(t *testing.T) runtime.Transport { return embedlog.New("laser", embedlog.Config{}) })
}

func TestReliableConsumerScenarios(t *testing.T) {
	transporttest.RunConsumer(t, func(t *testing.T) runtime.Transport { return embedlog.New("laser", embedlog.Config{}) })
}

func TestStreamScenarios(t *testing.T) {
	transporttest.RunStream(t, func(t *testing.T) runtime.Transport { return embedlog.New("laser", embedlog.Config{}) })
}
