package registry_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lasergo/laser/registry"
	"github.com/lasergo/laser/runtime"
)

func TestRegistryErrNoCapableAgentHasTheRuntimeCode(t *testing.T) {
	err := fmt.Errorf("route: %w", registry.ErrNoCapableAgent)
	if runtime.CodeOf(err) != runtime.CodeNoCapableAgent || !runtime.IsRetryable(err) {
		t.Fatalf("registry.ErrNoCapableAgent: code %s, retryable %v; want no capable agent, retried", runtime.CodeOf(err), runtime.IsRetryable(err))
	}
	if !errors.Is(err, registry.ErrNoCapableAgent) {
		t.Fatal("a wrapped ErrNoCapableAgent no longer matches itself")
	}
}
