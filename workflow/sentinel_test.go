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
	if !errors.Is(err, runtime.ErrInvalid) || runtime.CodeOf(err) != runtime.CodeInvalid || runtime.IsRetryable(err) {
		t.Fatalf("workflow.ErrInvalid: is runtime.ErrInvalid %v, code %s, retryable %v; want a permanent runtime invalid error",
			errors.Is(err, runtime.ErrInvalid), runtime.CodeOf(err), runtime.IsRetryable(err))
	}
	if errors.Is(runtime.ErrInvalid, workflow.ErrInvalid) {
		t.Fatal("runtime.ErrInvalid matches workflow.ErrInvalid; only workflow's own errors should")
	}
}
