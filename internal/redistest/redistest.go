// Package redistest starts a real redis-server (the Debian package) for
// tests: on a free loopback port, in a temporary folder, persisting
// nothing; or several, joined in a Redis Cluster (StartCluster). A test
// that needs Redis skips with a clear message only when the binary is not
// installed, and fails then when CI is set; .ci/run installs it.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Binary is the server executable looked up on PATH, then in /usr/bin.
const Binary = "redis-server"

// Server is a running redis-server owned by one test.
type Server struct {
	t    testing.TB
	path string
	dir  string
	port int
	args []string // more flags
	cmd  *exec.Cmd
}

// Start runs a redis-server for t and stops it when t ends. It skips t when
// redis-server is not installed (fails it when CI is set).
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, path: binary(t), dir: t.TempDir()}
	s.port = freePort(t)
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// binary returns the path of redis-server, or skips t (fails it under CI).
func binary(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath(Binary)
	if err == nil {
		return path
	}
	if _, serr := os.Stat("/usr/bin/" + Binary); serr == nil {
		return "/usr/bin/" + Binary
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed: .ci/run installs it (apt-get install -y redis-server) for the Redis tests", Binary)
	}
	t.Skipf("%s is not installed (apt-get install -y redis-server); the Redis tests need a real server", Binary)
	return ""
}

// Addr returns host:port of the server.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Stop kills the server (as a crash would) and waits for it to exit; the
// port stays reserved for Restart.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server again on the same port, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

func (s *Server) start() {
	s.t.Helper()
	cmd := exec.Command(s.path, append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--dir", s.dir, "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--loglevel", "warning",
		"--logfile", filepath.Join(s.dir, "redis.log")}, s.args...)...)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", s.path, err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ping(s.Addr()) == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.Stop()
			s.t.Fatalf("redis-server on %s did not answer PING within 10 s; its log:\n%s", s.Addr(), log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ping speaks just enough RESP to learn whether the server is serving.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
