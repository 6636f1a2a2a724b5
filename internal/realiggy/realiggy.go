// Package realiggy gives each test that runs against a real Iggy server
// (the one LASER_IGGY_ADDR names) a stream of its own, made fresh for the
// test and deleted after it, so no test reads another's records or an
// earlier run's, and the suite passes any number of times against one
// server.
package realiggy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/iggy"
)

// Env names the environment variable holding the connection string of a
// real Iggy server, iggy://user:password@host:port/stream or
// iggy+pat://token@host:port/stream; its stream names the fresh streams.
const Env = "LASER_IGGY_ADDR"

// deleteTimeout bounds how long a test's end waits for its stream's
// deletion.
const deleteTimeout = 10 * time.Second

// maxTestName bounds how much of the test's name goes into a stream name,
// which Iggy caps at 255 bytes.
const maxTestName = 48

// Stream returns conn with its stream replaced by a fresh one named
// <stream>_<test>_<random>, and deletes that stream, with every topic,
// record and group in it, when tb ends (after the transports tb's test
// dialed have closed, as cleanups run last-registered first). The stream
// itself is made by whatever dials the returned string (EnsureTopics), so a
// test that never dials leaves nothing to delete. A deletion that fails or
// gets no answer in 10 s is logged, not failed: it leaves a stream no later
// run reuses.
func Stream(tb testing.TB, conn string) string {
	tb.Helper()
	return stream(tb, conn, deleteTimeout)
}

// stream is Stream with the wait for the deletion as a parameter.
func stream(tb testing.TB, conn string, timeout time.Duration) string {
	tb.Helper()
	u, err := url.Parse(conn)
	if err != nil || (u.Scheme != "iggy" && u.Scheme != "iggy+pat") || u.User == nil || u.Host == "" {
		tb.Fatalf("%s must be iggy://user:password@host:port/stream or iggy+pat://token@host:port/stream, got %q", Env, redact(conn))
		return ""
	}
	base := strings.Trim(u.Path, "/")
	if base == "" {
		base = "laser"
	}
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix) // crypto/rand.Read never fails
	name := fmt.Sprintf("%s_%s_%s", base, testName(tb.Name()), hex.EncodeToString(suffix))
	if len(name) > 255 {
		name = name[len(name)-255:]
	}
	u.Path, u.RawPath = "/"+name, ""
	fresh := u.String()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		switch err := deleteStream(ctx, fresh); {
		case ctx.Err() != nil:
			tb.Logf("stream %s left on the server: no answer to its deletion in %v (%v)", name, timeout, err)
		case err != nil:
			tb.Logf("stream %s left on the server: %v", name, err)
		}
	})
	return fresh
}

// testName turns a test's name into lower-case letters, digits and
// underscores, the last maxTestName of them (subtests differ at the end).
func testName(name string) string {
	b := []byte(strings.ToLower(name))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	if len(b) > maxTestName {
		b = b[len(b)-maxTestName:]
	}
	return string(b)
}

// deleteStream deletes the stream conn names through the transport, so
// either framing (0.8, or VSR with ?protocol=vsr) is spoken; a stream that
// was never made is not an error (the test did not dial).
func deleteStream(ctx context.Context, conn string) error {
	tr, err := iggy.Dial(ctx, conn, iggy.Config{})
	if err != nil {
		return err
	}
	defer func() { _ = tr.Close() }()
	return tr.DeleteStream(ctx)
}

// redact hides the password or token of a connection string for messages.
func redact(conn string) string {
	u, err := url.Parse(conn)
	if err != nil || u.User == nil {
		return "(unparsable connection string)"
	}
	u.User = url.User("xxx")
	return u.String()
}
