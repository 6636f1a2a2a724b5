package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// EnvPython names the Python interpreter that runs the reference agents; it
// must import laser_sdk (pip install laser-sdk==0.8.2). Default python3.
const EnvPython = "LASER_PYTHON"

// pythonWithSDK returns the interpreter to run the reference agents with.
// Without one that imports laser_sdk the test skips on a developer machine
// and fails under CI, where the suite must run.
func pythonWithSDK(t *testing.T) string {
	t.Helper()
	name := os.Getenv(EnvPython)
	if name == "" {
		name = "python3"
	}
	path, err := exec.LookPath(name)
	if err == nil {
		var out []byte
		out, err = exec.CommandContext(t.Context(), path, "-c", "import laser_sdk").CombinedOutput()
		if err != nil {
			err = fmt.Errorf("%s cannot import laser_sdk: %w: %s", path, err, bytes.TrimSpace(out))
		}
	}
	if err != nil {
		msg := fmt.Sprintf("the cross-SDK suite needs Python with the reference SDK (pip install laser-sdk==0.8.2; point %s at its python): %v", EnvPython, err)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// peer is one reference Python process (testdata/peer.py): commands go to
// its stdin as JSON lines, and each is answered by a JSON line carrying its
// id; lines with an "event" key report what its agents saw.
type peer struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan map[string]any
	stderr *lockedBuffer

	mu      sync.Mutex
	nextID  int
	waiters map[int]chan map[string]any
	closed  chan struct{} // closed when stdout ends
}

// startPeer starts peer.py connected to pyConn (user:password@host:port) on
// stream and waits for its ready line. The process is killed when the test
// ends.
func startPeer(ctx context.Context, t *testing.T, python, pyConn, stream string) *peer {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "peer.py"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-u", script, pyConn, stream)
	p := &peer{t: t, cmd: cmd, events: make(chan map[string]any, 256), stderr: &lockedBuffer{},
		waiters: map[int]chan map[string]any{}, closed: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the reference agent: %v", err)
	}
	t.Cleanup(func() {
		_ = p.stdin.Close()
		_ = cmd.Process.Kill()
		<-p.closed // the reader logs through t, so it ends before the test does
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("reference agent stderr:\n%s", p.stderr.String())
		}
	})
	go p.read(stdout)
	p.event(ctx, t, "ready", nil)
	return p
}

func (p *peer) read(stdout io.Reader) {
	defer close(p.closed)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			p.t.Logf("reference agent printed a line that is not JSON: %q", sc.Text())
			continue
		}
		if id, ok := line["id"].(float64); ok {
			p.mu.Lock()
			w := p.waiters[int(id)]
			delete(p.waiters, int(id))
			p.mu.Unlock()
			if w != nil {
				w <- line
			}
			continue
		}
		select {
		case p.events <- line:
		default:
			p.t.Errorf("reference agent event dropped, the test reads too few: %v", line)
		}
	}
}

// call sends command do with args and returns its answer; a failed command
// fails the test with the Python error.
func (p *peer) call(ctx context.Context, t *testing.T, do string, args map[string]any) map[string]any {
	t.Helper()
	res, err := p.try(ctx, do, args)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// try is call returning the Python error instead of failing the test.
func (p *peer) try(ctx context.Context, do string, args map[string]any) (map[string]any, error) {
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	w := make(chan map[string]any, 1)
	p.waiters[id] = w
	p.mu.Unlock()
	line := map[string]any{"id": id, "do": do}
	for k, v := range args {
		line[k] = v
	}
	b, err := json.Marshal(line)
	if err != nil {
		return nil, err
	}
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("reference agent %s: %w", do, err)
	}
	select {
	case res := <-w:
		if ok, _ := res["ok"].(bool); !ok {
			return res, fmt.Errorf("reference agent %s failed: %v\n%v", do, res["error"], res["trace"])
		}
		return res, nil
	case <-p.closed:
		return nil, fmt.Errorf("reference agent exited during %s:\n%s", do, p.stderr.String())
	case <-ctx.Done():
		return nil, fmt.Errorf("reference agent %s: no answer: %w", do, ctx.Err())
	}
}

// event waits for the next event named name for which match (when set)
// holds, skipping others.
func (p *peer) event(ctx context.Context, t *testing.T, name string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	for {
		select {
		case ev := <-p.events:
			if ev["event"] == name && (match == nil || match(ev)) {
				return ev
			}
		case <-p.closed:
			t.Fatalf("reference agent exited while the test waited for %q:\n%s", name, p.stderr.String())
		case <-ctx.Done():
			t.Fatalf("no %q event from the reference agent: %v", name, ctx.Err())
		}
	}
}

// lockedBuffer collects stderr written by exec's copier goroutine.
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
