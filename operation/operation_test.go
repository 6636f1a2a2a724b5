package operation_test

import (
	"testing"

	"github.com/lasergo/laser/operation"
)

// TestKindStringNamesEachKind: every kind prints as bridges label it, and a
// kind outside the four as "unknown".
func TestKindStringNamesEachKind(t *testing.T) {
	for k, want := range map[operation.Kind]string{
		operation.Request: "request",
		operation.Command: "command",
		operation.Event:   "event",
		operation.Stream:  "stream",
		0:                 "unknown",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}
