package effectgate

import (
	"context"
	"testing"

	"github.com/lasergo/laser/effect"
)

func TestProtoIsAPublishUnlessAsNamesAnother(t *testing.T) {
	if e := Proto(context.Background()); e.Kind != effect.Publish || e.Operation != "" {
		t.Fatalf("Proto of a bare context = %+v, want a plain publish", e)
	}
	ctx := As(context.Background(), effect.Effect{Kind: effect.MemoryWrite, Operation: "remember"})
	if e := Proto(ctx); e.Kind != effect.MemoryWrite || e.Operation != "remember" {
		t.Fatalf("Proto under As = %+v, want the memory write", e)
	}
}
