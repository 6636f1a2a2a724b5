package iggy_test

import (
	"github.com/lasergo/laser/internal/proccpu"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serverCPU returns the CPU time the Iggy server named by
// LASER_IGGY_SERVER_PID (a process on this machine) has used so far, summed
// over its threads; ok is false when the variable is unset or the process
// cannot be read. It tells whether a loop makes the server work harder per
// message, which the client's own CPU figures cannot show.
func serverCPU() (time.Duration, bool) {
	pid := os.Getenv("LASER_IGGY_SERVER_PID")
	if pid == "" {
		return 0, false
	}
	// schedstat's first field is a thread's time on a CPU in nanoseconds;
	// the process's own file covers its main thread only. A thread that
	// ends between two readings takes its time with it; Iggy's shards and
	// workers live as long as the server.
	tasks, err := filepath.Glob(filepath.Join("/proc", pid, "task", "*", "schedstat"))
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var total time.Duration
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		fields := strings.Fields(string(b))
		if len(fields) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, false
		}
		total += time.Duration(ns)
	}
	return total, true
}

// TestServerCPUReadsTheNamedProcess checks the benchmark's server-CPU probe
// on this test process: unset it reports nothing, set it sees CPU time
// spent on another thread of the process grow.
func TestServerCPUReadsTheNamedProcess(t *testing.T) {
	t.Setenv("LASER_IGGY_SERVER_PID", "")
	if _, ok := serverCPU(); ok {
		t.Fatal("read a CPU time with LASER_IGGY_SERVER_PID unset")
	}
	t.Setenv("LASER_IGGY_SERVER_PID", strconv.Itoa(os.Getpid()))
	before, ok := serverCPU()
	if !ok {
		t.Fatal("cannot read this process's CPU time")
	}
	// Busy until the kernel's own account of the process (getrusage) grew
	// by 20 ms: on a loaded machine that takes longer than 20 ms of wall
	// time, and a fixed wall-clock loop may get too little CPU to measure.
	done := make(chan struct{})
	go func() {
		defer close(done)
		start, limit := proccpu.Used(), time.Now().Add(10*time.Second)
		for proccpu.Used()-start < 20*time.Millisecond && time.Now().Before(limit) {
			for i := 0; i < 1e5; i++ {
			}
		}
	}()
	<-done
	after, ok := serverCPU()
	if !ok {
		t.Fatal("cannot read this process's CPU time the second time")
	}
	if spent := after - before; spent < 10*time.Millisecond {
		t.Fatalf("20 ms of CPU spent on another goroutine added %v to the probe's reading", spent)
	}
	t.Setenv("LASER_IGGY_SERVER_PID", "not-a-pid")
	if _, ok := serverCPU(); ok {
		t.Fatal("read a CPU time for a pid that is no number")
	}
}
