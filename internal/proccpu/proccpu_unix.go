//go:build unix

package proccpu

import (
	"syscall"
	"time"
)

// Used returns the user and system CPU time of every thread of the process
// so far, or 0 where the kernel will not say.
func Used() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
