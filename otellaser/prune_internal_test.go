package otellaser

import (
	goruntime "runtime"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
)

func TestObserveConsumerPrunesCollectedConsumersWithoutAMetricsReader(t *testing.T) {
	tel := New(Config{MeterProvider: noop.NewMeterProvider()})
	log := embedlog.New("laser", embedlog.Config{})
	for i := 0; i < 50; i++ {
		// An agent building a consumer per start: each is dropped at once.
		if _, err := runtime.NewConsumer(log, runtime.ConsumerConfig{
			Topic: "work.commands", Group: "worker",
			Handler:    runtime.HandlerFunc(func(*runtime.Ctx) error { return nil }),
			Middleware: []runtime.Middleware{tel},
		}); err != nil {
			t.Fatal(err)
		}
		goruntime.GC()
	}
	tel.mu.Lock()
	n := len(tel.consumers)
	tel.mu.Unlock()
	if n > 5 {
		t.Fatalf("%d consumers held after 50 were dropped; nothing collects metrics, so ObserveConsumer must prune", n)
	}
}
