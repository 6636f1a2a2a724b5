package bridgetest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// missing fails the test under CI, where the client must be installed
// (.ci/run installs it), and skips it elsewhere.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// repoRoot is the directory holding go.work, above the working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.work above the test's directory")
		}
		dir = parent
	}
}

// Python is a Python interpreter that imports every module of modules:
// $LASER_BRIDGE_PYTHON, else the virtualenv .ci/run makes (.ci/venv). A
// missing one fails the test under CI and skips it elsewhere.
func Python(t *testing.T, modules ...string) string {
	t.Helper()
	py := os.Getenv("LASER_BRIDGE_PYTHON")
	if py == "" {
		py = filepath.Join(repoRoot(t), ".ci", "venv", "bin", "python")
	}
	if _, err := os.Stat(py); err != nil {
		missing(t, "no Python client: %v (run .ci/run, or set LASER_BRIDGE_PYTHON)", err)
	}
	for _, m := range modules {
		if out, err := exec.CommandContext(t.Context(), py, "-c", "import "+m).CombinedOutput(); err != nil {
			missing(t, "%s cannot import %s: %v: %s (run .ci/run)", py, m, err, out)
		}
	}
	return py
}

// NodeModules is the node_modules folder holding package pkg:
// $LASER_BRIDGE_NODE_MODULES, else the one .ci/run installs into
// (.ci/node/node_modules). It fails under CI and skips elsewhere when node
// or the package is missing.
func NodeModules(t *testing.T, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, "no node: %v", err)
	}
	dir := os.Getenv("LASER_BRIDGE_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), ".ci", "node", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(dir, pkg, "package.json")); err != nil {
		missing(t, "no %s: %v (run .ci/run, or set LASER_BRIDGE_NODE_MODULES)", pkg, err)
	}
	return dir
}

// RunClient runs a client program (name and args) with env added, bounded
// by a minute, and returns its stdout; a failure ends the test with stderr.
func RunClient(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s\nstdout:\n%s", name, args, err, stderr.String(), stdout.String())
	}
	return stdout.Bytes()
}
