package runtime_test

import (
	"errors"
	"testing"

	"github.com/lasergo/laser/runtime"
)

func TestChunkAssemblerRefusesARecordOffAStream(t *testing.T) {
	asm := runtime.NewChunkAssembler(0)
	if _, _, err := asm.Add(&runtime.Message{}); runtime.CodeOf(err) != runtime.CodeInvalid {
		t.Fatalf("Add of a record without a channel = %v, want CodeInvalid", err)
	}
	if err := asm.End(); !errors.Is(err, runtime.ErrStreamTimeout) {
		t.Errorf("End of an empty stream = %v, want ErrStreamTimeout (no terminal)", err)
	}
}
