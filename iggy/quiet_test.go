package iggy_test

import (
	"bytes"
	"log"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/lasertest"
)

// lockedBuffer is a buffer the standard logger and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestDialWritesNothingToTheStandardLogger: a library's login must not print
// the SDK's leader-detection steps on the program's standard logger; what it
// says goes to the transport's logger at debug level.
func TestDialWritesNothingToTheStandardLogger(t *testing.T) {
	var std lockedBuffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&std)
	t.Cleanup(func() { log.SetOutput(prev); log.SetFlags(flags) })
	var own lockedBuffer
	logger := slog.New(slog.NewTextHandler(&own, &slog.HandlerOptions{Level: slog.LevelDebug}))

	s := iggytest.Start(t)
	for _, conn := range []string{"iggy://iggy:iggy@" + s.Addr() + "/quiet"} {
		tr, err := iggy.Dial(t.Context(), conn, iggy.WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Partitions(t.Context(), "nothing"); err == nil {
			t.Fatal("a missing topic was found")
		}
		_ = tr.Close()
	}
	if strings.Contains(std.String(), "cluster metadata") {
		t.Fatalf("the standard logger got:\n%s", std.String())
	}
	if !strings.Contains(own.String(), "logged in") {
		t.Fatalf("the transport's logger got no login line:\n%s", own.String())
	}
}

func TestDialWithATokenLogsIn(t *testing.T) {
	s := iggytest.Start(t, iggytest.WithPersonalAccessToken("tok-1"))
	tr, err := iggy.Dial(t.Context(), "iggy+pat://tok-1@"+s.Addr()+"/pat")
	if err != nil {
		t.Fatal(err)
	}
	_ = tr.Close()
	if _, err := iggy.Dial(t.Context(), "iggy+pat://wrong@"+s.Addr()+"/pat"); err == nil {
		t.Fatal("an unknown token logged in")
	}
}

// notifyingBuffer is a lockedBuffer that says when something was written.
type notifyingBuffer struct {
	lockedBuffer
	wrote chan struct{}
}

func (w *notifyingBuffer) Write(p []byte) (int, error) {
	n, err := w.lockedBuffer.Write(p)
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return n, err
}

// TestAFailedHeartbeatIsLoggedOnTheTransportsLogger: the link pings on its
// own schedule, and a ping to a server that went away is the transport's
// to log, never the process's standard logger (the SDK's heartbeat printed
// "[WARN] heartbeat failed" there).
func TestAFailedHeartbeatIsLoggedOnTheTransportsLogger(t *testing.T) {
	var std lockedBuffer
	prev, flags := log.Writer(), log.Flags()
	log.SetOutput(&std)
	t.Cleanup(func() { log.SetOutput(prev); log.SetFlags(flags) })
	own := &notifyingBuffer{wrote: make(chan struct{}, 1)}
	logger := slog.New(slog.NewTextHandler(own, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clock := lasertest.NewManualClock(time.Unix(1_700_000_000, 0))

	s := iggytest.Start(t)
	tr, err := iggy.Dial(t.Context(), "iggy://iggy:iggy@"+s.Addr()+"/beat", iggy.WithLogger(logger), iggy.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	s.Close()
	for !strings.Contains(own.String(), "heartbeat failed") {
		if err := clock.BlockUntil(t.Context(), 1); err != nil {
			t.Fatalf("the link never waited for its heartbeat: %v\n%s", err, own.String())
		}
		clock.Advance(5 * time.Second)
		select {
		case <-own.wrote:
		case <-t.Context().Done():
			t.Fatalf("no heartbeat failure was logged:\n%s", own.String())
		}
	}
	if std.String() != "" {
		t.Fatalf("the standard logger got:\n%s", std.String())
	}
}
