package iggytest_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	goruntime "runtime"
	"testing"
	"time"

	ierror "github.com/apache/iggy/foreign/go/errors"

	"github.com/lasergo/laser/iggytest"
	"github.com/lasergo/laser/lasertest"
)

// rawConn opens a TCP connection that speaks no protocol of its own.
func rawConn(t *testing.T, s *iggytest.Server) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// frameHeader is an Iggy request header announcing a payload of n bytes.
func frameHeader(code uint32, n uint32) []byte {
	var h [8]byte
	binary.LittleEndian.PutUint32(h[0:4], n+4)
	binary.LittleEndian.PutUint32(h[4:8], code)
	return h[:]
}

// closedByServer waits until the server closes nc, failing t if it does
// not within limit (a fail-safe, not a measured wait).
func closedByServer(t *testing.T, nc net.Conn, limit time.Duration) {
	t.Helper()
	_ = nc.SetReadDeadline(time.Now().Add(limit))
	var b [64]byte
	for {
		_, err := nc.Read(b[:])
		if err == nil {
			continue
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			t.Fatalf("the server kept the connection open for %v", limit)
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			var oe *net.OpError
			if !errors.As(err, &oe) {
				t.Fatalf("read: %v", err)
			}
		}
		return
	}
}

func TestALargeFrameBeforeLoginClosesTheConnection(t *testing.T) {
	nc := rawConn(t, iggytest.Start(t, iggytest.Config{}))
	// A login frame announcing 64 MiB, of which only a little is sent: the
	// server must not wait for (and grow a buffer towards) the rest.
	if _, err := nc.Write(append(frameHeader(iggytest.CmdLogin, 64<<20-8), make([]byte, 1024)...)); err != nil {
		t.Fatal(err)
	}
	closedByServer(t, nc, 10*time.Second)
}

func TestAConnectionThatNeverLogsInIsClosed(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{LoginTimeout: 100 * time.Millisecond, IdleTimeout: time.Hour, FrameTimeout: time.Hour})
	closedByServer(t, rawConn(t, s), 10*time.Second)
}

func TestAHalfSentFrameIsClosed(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{LoginTimeout: time.Hour, IdleTimeout: time.Hour, FrameTimeout: 100 * time.Millisecond})
	nc := rawConn(t, s)
	if _, err := nc.Write(append(frameHeader(iggytest.CmdPing, 100), 1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	closedByServer(t, nc, 10*time.Second)
}

func TestAnIdleConnectionIsClosed(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{LoginTimeout: time.Hour, IdleTimeout: 100 * time.Millisecond, FrameTimeout: time.Hour})
	closedByServer(t, rawConn(t, s), 10*time.Second)
}

func TestConnectionsBeyondTheCapAreClosed(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{MaxConnections: 2})
	kept := []net.Conn{rawConn(t, s), rawConn(t, s)}
	// The server has taken both once each answers a ping.
	for _, nc := range kept {
		if _, err := nc.Write(frameHeader(iggytest.CmdPing, 0)); err != nil {
			t.Fatal(err)
		}
		var status [8]byte
		if _, err := io.ReadFull(nc, status[:]); err != nil {
			t.Fatalf("ping on a kept connection: %v", err)
		}
	}
	closedByServer(t, rawConn(t, s), 10*time.Second)
	_ = kept[0].Close()
	// Once one leaves, a new client is served again.
	for range 100 {
		c := dial(t, s)
		if c.Ping() == nil {
			return
		}
	}
	t.Fatal("no connection was served after one of the two left")
}

func TestAnExpiredPersonalAccessTokenIsRefused(t *testing.T) {
	clock := lasertest.NewManualClock(time.UnixMicro(1_000_000))
	s := iggytest.Start(t, iggytest.Config{Clock: clock})
	// The SDK puts its u32 expiry in the upper half of the u64 (see the
	// spec): 1 is 2^32 µs, about 72 minutes.
	raw, err := login(t, s).CreatePersonalAccessToken("ci", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dial(t, s).LoginWithPersonalAccessToken(raw.Token); err != nil {
		t.Fatalf("a fresh token was refused: %v", err)
	}
	clock.Advance(2 * time.Hour)
	_, err = dial(t, s).LoginWithPersonalAccessToken(raw.Token)
	wantCode(t, err, ierror.PersonalAccessTokenExpiredCode)
}

// TestUnauthenticatedClientsHoldLittleMemory replays the attack the
// security review measured on laser dev (12 half-sent 64 MiB frames and
// 2,000 idle connections took the server from 8 MiB to 2.1 GiB): the
// server's heap must stay within a few MiB of where it started.
func TestUnauthenticatedClientsHoldLittleMemory(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{})
	heap := func() uint64 {
		goruntime.GC()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	chunk := make([]byte, 1<<20)
	for range 12 {
		nc := rawConn(t, s)
		_, _ = nc.Write(frameHeader(iggytest.CmdLogin, 64<<20-8))
		for range 16 { // 16 MiB of the announced 64, if the server reads it
			if _, err := nc.Write(chunk); err != nil {
				break // closed by the server, as it should
			}
		}
	}
	for range 2000 {
		nc, err := net.Dial("tcp", s.Addr())
		if err != nil {
			break // the machine's limit, not the server's
		}
		t.Cleanup(func() { _ = nc.Close() })
	}
	after := heap()
	grew := int64(after) - int64(before)
	t.Logf("heap %d MiB before, %d MiB after 12 half-sent frames and 2,000 idle connections", before>>20, after>>20)
	if grew > 48<<20 {
		t.Fatalf("the server's heap grew by %d MiB", grew>>20)
	}
}

func TestAClientThatDoesNotReadItsRepliesLosesItsSlot(t *testing.T) {
	s := iggytest.Start(t, iggytest.Config{MaxConnections: 1, LoginTimeout: time.Hour, IdleTimeout: time.Hour, FrameTimeout: 100 * time.Millisecond})
	flood := rawConn(t, s)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a fail-safe against a hang, not a measured wait: under CI load the blocked write takes long to notice
	defer cancel()
	if err := s.WaitConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// Pings without reading a reply: the replies fill the socket buffers
	// until the server's write blocks.
	pings := bytes.Repeat(frameHeader(iggytest.CmdPing, 0), 8192)
	wrote := make(chan error, 1)
	go func() {
		for {
			if _, err := flood.Write(pings); err != nil {
				wrote <- err
				return
			}
		}
	}()
	if err := s.WaitConnections(ctx, 0); err != nil {
		t.Fatalf("the server kept a client that reads nothing: %v", err)
	}
	_ = flood.Close()
	<-wrote
	if err := dial(t, s).Ping(); err != nil {
		t.Fatalf("a new client was not served after the flooding one lost its slot: %v", err)
	}
}

func TestAPersonalAccessTokenWithAHugeExpiryNeverExpires(t *testing.T) {
	clock := lasertest.NewManualClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	s := iggytest.Start(t, iggytest.Config{Clock: clock})
	// The largest expiry the SDK sends, 0xFFFFFFFF << 32 µs: added to the
	// clock it would wrap past 2^64 to a time long gone.
	raw, err := login(t, s).CreatePersonalAccessToken("forever", 0xFFFFFFFF)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dial(t, s).LoginWithPersonalAccessToken(raw.Token); err != nil {
		t.Fatalf("a token with the largest expiry was refused: %v", err)
	}
}
