//go:build !unix

package batch_test

import "time"

// processCPU cannot tell the process's CPU time here; the CPU figures of
// the benchmarks read 0.
func processCPU() time.Duration { return 0 }
