package realiggy_test

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/internal/realiggy"
	"github.com/lasergo/laser/runtime"
)

// recorder is a testing.TB whose cleanups, logs and fatal errors are kept
// for the test to run and read.
type recorder struct {
	testing.TB
	name     string
	cleanups []func()
	logs     []string
	fatal    string
}

func (r *recorder) Helper()          {}
func (r *recorder) Name() string     { return r.name }
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}

// end runs the cleanups last-registered first, as testing does.
func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// streamOf is the stream a connection string names.
func streamOf(t *testing.T, conn string) string {
	t.Helper()
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// sdk is a logged-in SDK client on s.
func sdk(t *testing.T, s *iggytest.Server) iggcon.Client {
	t.Helper()
	c, err := client.NewIggyClient(client.WithTcp(tcp.WithServerAddress(s.Addr())))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.LoginUser("iggy", "iggy"); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStreamIsFreshPerCallAndNamedAfterTheTest(t *testing.T) {
	conn := "iggy://iggy:iggy@127.0.0.1:1/laser_test"
	r := &recorder{TB: t, name: "TestMemory/iggy#01"}
	a, b := realiggy.Stream(r, conn), realiggy.Stream(r, conn)
	if a == b {
		t.Fatalf("two calls gave the same stream %q", a)
	}
	for _, c := range []string{a, b} {
		if s := streamOf(t, c); !strings.HasPrefix(s, "laser_test_testmemory_iggy_01_") || len(s) != len("laser_test_testmemory_iggy_01_")+12 {
			t.Fatalf("stream %q, want laser_test_testmemory_iggy_01_ and 12 hex digits", s)
		}
		if !strings.HasPrefix(c, "iggy://iggy:iggy@127.0.0.1:1/") {
			t.Fatalf("connection string %q lost the server or the login", c)
		}
	}
	if len(r.cleanups) != 2 {
		t.Fatalf("%d cleanups registered, want one per stream", len(r.cleanups))
	}
}

func TestStreamIsDeletedWithItsRecordsWhenTheTestEnds(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	r := &recorder{TB: t, name: "TestIsolated"}
	conn := realiggy.Stream(r, "iggy://iggy:iggy@"+s.Addr()+"/laser_test")
	tr, err := iggy.Dial(t.Context(), conn, iggy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	r.Cleanup(func() { _ = tr.Close() })
	if err := tr.EnsureTopics(t.Context(), 1, "events"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Publish(t.Context(), "events", runtime.Outgoing{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	id, err := iggcon.NewIdentifier(streamOf(t, conn))
	if err != nil {
		t.Fatal(err)
	}
	c := sdk(t, s)
	if _, err := c.GetStream(id); err != nil {
		t.Fatalf("the fresh stream was not made: %v", err)
	}
	r.end()
	if _, err := c.GetStream(id); !errors.Is(err, ierror.ErrStreamIdNotFound) && !errors.Is(err, ierror.ErrStreamNameNotFound) {
		t.Fatalf("after the test the stream answers %v, want not found", err)
	}
	if len(r.logs) != 0 {
		t.Fatalf("logged %q", r.logs)
	}
}

func TestStreamNeverDialedEndsQuietly(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	r := &recorder{TB: t, name: "TestIdle"}
	realiggy.Stream(r, "iggy://iggy:iggy@"+s.Addr()+"/laser_test")
	r.end()
	if len(r.logs) != 0 {
		t.Fatalf("a stream never made was reported: %q", r.logs)
	}
}

func TestStreamLeftBehindIsLoggedNotFailed(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	r := &recorder{TB: t, name: "TestWrongPassword"}
	realiggy.Stream(r, "iggy://iggy:wrong@"+s.Addr()+"/laser_test")
	r.end()
	if len(r.logs) != 1 || !strings.Contains(r.logs[0], "left on the server") || !strings.Contains(r.logs[0], "logging in") || r.fatal != "" {
		t.Fatalf("logs %q, fatal %q; want one line saying the stream was left, and no failure", r.logs, r.fatal)
	}
}

func TestStreamRefusesAnAddressItCannotUseAndHidesThePassword(t *testing.T) {
	for _, conn := range []string{"127.0.0.1:8090", "http://iggy:secret@127.0.0.1:8090/s", "iggy://127.0.0.1:8090/s", "iggy://iggy:secret@/s"} {
		r := &recorder{TB: t, name: "TestBad"}
		realiggy.Stream(r, conn)
		if !strings.Contains(r.fatal, realiggy.Env) || strings.Contains(r.fatal, "secret") {
			t.Errorf("%q: fatal %q, want one naming %s without the password", conn, r.fatal, realiggy.Env)
		}
	}
}

// TestStreamDeletionThatGetsNoAnswerIsLoggedNotWaitedFor: a server that
// accepts and never answers (as a 0.9 VSR server is to a client speaking
// 0.8) does not hang the test's end.
func TestStreamDeletionThatGetsNoAnswerIsLoggedNotWaitedFor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	r := &recorder{TB: t, name: "TestSilent"}
	realiggy.StreamWithin(r, "iggy://iggy:iggy@"+ln.Addr().String()+"/laser_test", 100*time.Millisecond)
	r.end()
	if len(r.logs) != 1 || !strings.Contains(r.logs[0], "no answer to its deletion in 100ms") {
		t.Fatalf("logs %q, want one saying the deletion got no answer", r.logs)
	}
}
