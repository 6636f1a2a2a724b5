package runtime_test

import (
	"slices"
	"testing"

	"github.com/lasergo/laser/embedlog"
	"github.com/lasergo/laser/runtime"
)

func TestAssembleStreamRefusesARecordOffAStream(t *testing.T) {
	client := runtime.NewClient(embedlog.New("laser", embedlog.Config{}), runtime.ClientConfig{})
	for _, err := range client.AssembleStream(slices.Values([]*runtime.Message{{}}), 0) {
		if runtime.CodeOf(err) != runtime.CodeInvalid {
			t.Fatalf("a record without a channel: %v, want CodeInvalid", err)
		}
	}
	for _, err := range client.AssembleStream(slices.Values([]*runtime.Message(nil)), 0) {
		if streamFault(err) != "stream ended without a terminal chunk" || runtime.CodeOf(err) != runtime.CodeTimeout {
			t.Errorf("an empty stream: %v, want ErrStreamTimeout (no terminal)", err)
		}
	}
}
