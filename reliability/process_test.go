package reliability_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The suite's processes: the laser dev server (the embedded log behind the
// Iggy protocol, in its own process) and the crash worker. They are built
// once per test binary into a folder TestMain removes.

var (
	binOnce sync.Once
	binDir  string
	binErr  error
	bins    struct{ laser, worker string }
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// repoRoot walks up from the working directory to the folder holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the repository root (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// buildBinaries builds laser and crashworker with `go build`, with the race
// detector when this test binary has it.
//
// Both are modules of their own (cobra; go-redis), built from the root
// through the repository's go.work.
func buildBinaries(t *testing.T) (laser, worker string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds laser and crashworker and runs them as processes (make test-short skips them)")
	}
	binOnce.Do(func() {
		root, err := repoRoot()
		if err != nil {
			binErr = err
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			binErr = fmt.Errorf("the go command is needed to build the suite's processes: %w", err)
			return
		}
		if binDir, err = os.MkdirTemp("", "laser-reliability-bin"); err != nil {
			binErr = err
			return
		}
		for _, b := range []struct {
			out *string
			pkg string
		}{
			{&bins.laser, "./cmd/laser"},
			{&bins.worker, "./reliability/cmd/crashworker"},
		} {
			*b.out = filepath.Join(binDir, filepath.Base(b.pkg))
			args := []string{"build", "-o", *b.out}
			if raceEnabled {
				args = append(args, "-race")
			}
			cmd := exec.Command(goTool, append(args, b.pkg)...)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				binErr = fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
				return
			}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return bins.laser, bins.worker
}

// lockedBuffer collects a process's stderr while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is a started child process.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	lines  chan string   // stdout, line by line
	done   chan struct{} // closed once the process was reaped
	err    error         // Wait's result, set before done closes
	killed bool
}

// startProc starts bin and reaps it in the background; the test's cleanup
// kills it if it is still running.
func startProc(t *testing.T, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), stderr: &lockedBuffer{}, lines: make(chan string, 64), done: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // nobody reads further lines; drop them
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL and reaps the process.
func (p *proc) kill() {
	if !p.exited() {
		p.killed = true
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

// terminate asks for a graceful stop with SIGTERM and waits up to limit.
func (p *proc) terminate(limit time.Duration) error {
	if p.exited() {
		return fmt.Errorf("%s had already exited: %v\n%s", p.name, p.err, p.stderr)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("%s exited with %v after SIGTERM\n%s", p.name, p.err, p.stderr)
		}
		return nil
	case <-time.After(limit):
		p.kill()
		return fmt.Errorf("%s did not stop within %v of SIGTERM\n%s", p.name, limit, p.stderr)
	}
}

// waitLine waits for a stdout line containing substr and returns it.
func (p *proc) waitLine(ctx context.Context, substr string) (string, error) {
	for {
		select {
		case l := <-p.lines:
			if strings.Contains(l, substr) {
				return l, nil
			}
		case <-p.done:
			return "", fmt.Errorf("%s exited (%v) before printing %q\n%s", p.name, p.err, substr, p.stderr)
		case <-ctx.Done():
			return "", fmt.Errorf("%s did not print %q: %w\n%s", p.name, substr, ctx.Err(), p.stderr)
		}
	}
}

// startDevServer runs `laser dev` on a free loopback port, without its web
// console (whose default port, 8088, any other laser dev on the machine may
// hold), and returns its connection string for stream.
func startDevServer(t *testing.T, ctx context.Context, laser, stream string) (string, *proc) {
	t.Helper()
	p := startProc(t, "laser dev", laser, "dev", "--addr", "127.0.0.1:0", "--console", "")
	line, err := p.waitLine(ctx, "listening on ")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(line, "listening on ")
	addr, _, _ := strings.Cut(rest, " ")
	t.Cleanup(func() {
		if err := p.terminate(10 * time.Second); err != nil {
			t.Errorf("laser dev: %v", err)
		}
	})
	return "iggy://iggy:iggy@" + addr + "/" + stream, p
}

// pollUntil checks cond every interval until it holds, fails or ctx ends.
// It is only for state held by another process (files, a broker), which
// cannot signal this one.
func pollUntil(ctx context.Context, interval time.Duration, what string, cond func() (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}
