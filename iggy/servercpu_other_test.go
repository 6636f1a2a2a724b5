//go:build !linux

package iggy_test

import "time"

// serverCPU cannot read another process's CPU time here.
func serverCPU() (time.Duration, bool) { return 0, false }
