package bridgetest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ExampleBinary builds the bridges example (examples/bridges) into the
// test's temporary directory and returns its path: the tests launch the
// program a user runs, not a copy of its wiring.
func ExampleBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bridges")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "./examples/bridges")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the example: %v\n%s", err, out)
	}
	return bin
}

// ServeExample builds the bridges example, launches it with -serve on a
// free loopback port and returns the URL its first line names: A2A at the
// URL, AG-UI at URL/agui. The process is interrupted when the test ends.
func ServeExample(t *testing.T) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), ExampleBinary(t), "-serve", "127.0.0.1:0")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	r, w := io.Pipe()
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); w.Close() }()
	t.Cleanup(func() {
		// t.Context is canceled before cleanups run: that interrupts it.
		<-exited
	})
	out := bufio.NewReader(r)
	first, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("the example printed no address: %v\nstderr:\n%s", err, stderr.String())
	}
	// Keep reading, so the example never blocks on its output.
	go func() { _, _ = io.Copy(io.Discard, out) }()
	url, ok := strings.CutPrefix(strings.TrimSpace(first), "serving the help desk at ")
	if !ok {
		t.Fatalf("the example's first line %q names no URL", first)
	}
	return url
}
