package iggy_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/runtime"
)

func TestIggyErrTimeoutIsARuntimeTimeout(t *testing.T) {
	err := fmt.Errorf("poll: %w after 5s", iggy.ErrTimeout)
	if !errors.Is(err, runtime.ErrTimeout) || runtime.CodeOf(err) != runtime.CodeTimeout {
		t.Fatalf("iggy.ErrTimeout: is runtime.ErrTimeout %v, code %s; want a runtime timeout", errors.Is(err, runtime.ErrTimeout), runtime.CodeOf(err))
	}
	if errors.Is(runtime.NewError(runtime.CodeTimeout, "another timeout", nil), iggy.ErrTimeout) {
		t.Fatal("another runtime timeout matches iggy.ErrTimeout; it should match only its own")
	}
}
