package workflow_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/workflow"
)

func TestWorkflowErrInvalidIsARuntimeInvalidError(t *testing.T) {
	err := fmt.Errorf("%w: a cycle", workflow.ErrInvalid)
	invalid := &runtime.Error{Code: runtime.CodeInvalid}
	if !errors.Is(err, invalid) || runtime.CodeOf(err) != runtime.CodeInvalid || runtime.IsRetryable(err) {
		t.Fatalf("workflow.ErrInvalid: is a runtime invalid error %v, code %s, retryable %v; want a permanent runtime invalid error",
			errors.Is(err, invalid), runtime.CodeOf(err), runtime.IsRetryable(err))
	}
	if errors.Is(invalid, workflow.ErrInvalid) {
		t.Fatal("a runtime invalid error matches workflow.ErrInvalid; only workflow's own errors should")
	}
}
