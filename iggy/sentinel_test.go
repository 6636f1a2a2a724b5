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
	if !errors.Is(err, &runtime.Error{Code: runtime.CodeTimeout}) || runtime.CodeOf(err) != runtime.CodeTimeout {
		t.Fatalf("iggy.ErrTimeout: is a runtime timeout %v, code %s; want a runtime timeout", errors.Is(err, &runtime.Error{Code: runtime.CodeTimeout}), runtime.CodeOf(err))
	}
	if errors.Is(&runtime.Error{Code: runtime.CodeTimeout, Msg: "another timeout"}, iggy.ErrTimeout) {
		t.Fatal("another runtime timeout matches iggy.ErrTimeout; it should match only its own")
	}
}
