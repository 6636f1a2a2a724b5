package chunkstream_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/chunkstream"
	"github.com/lasergo/laser/lasertest"
	"github.com/lasergo/laser/wire"
)

// sink records the chunks a Writer sends.
type sink struct {
	chunks []string
	closed bool
	fail   error
}

func (s *sink) Send(b []byte) error {
	if s.fail != nil {
		return s.fail
	}
	s.chunks = append(s.chunks, string(b))
	return nil
}

func (s *sink) Close() error { s.closed = true; return nil }

func newWriter(t *testing.T, s *sink, cfg chunkstream.WriterConfig) *chunkstream.Writer {
	t.Helper()
	w, err := chunkstream.NewWriter(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWriterFlushesAtBytes(t *testing.T) {
	s := &sink{}
	w := newWriter(t, s, chunkstream.WriterConfig{FlushBytes: 4, Clock: lasertest.NewManualClock(time.Unix(0, 0))})
	for _, p := range []string{"ab", "c", "de", "f"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(s.chunks, []string{"abcde"}) {
		t.Errorf("chunks = %q, want [abcde] with f still buffered", s.chunks)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.chunks, []string{"abcde", "f"}) || !s.closed {
		t.Errorf("after Close: chunks %q, closed %v", s.chunks, s.closed)
	}
}

func TestWriterFlushesAtLinger(t *testing.T) {
	s := &sink{}
	clk := lasertest.NewManualClock(time.Unix(0, 0))
	w := newWriter(t, s, chunkstream.WriterConfig{Clock: clk})
	_, _ = w.Write([]byte("to"))
	clk.Advance(chunkstream.DefaultLinger - time.Millisecond)
	_, _ = w.Write([]byte("ken"))
	if len(s.chunks) != 0 {
		t.Fatalf("sent %q before the linger", s.chunks)
	}
	clk.Advance(time.Millisecond)
	_, _ = w.Write([]byte("s"))
	if !slices.Equal(s.chunks, []string{"tokens"}) {
		t.Errorf("chunks = %q, want [tokens] once the linger passed", s.chunks)
	}
}

func TestWriterSplitsAtTheChunkCap(t *testing.T) {
	s := &sink{}
	w := newWriter(t, s, chunkstream.WriterConfig{})
	big := strings.Repeat("x", wire.MaxChunkBodyBytes+10)
	if _, err := w.Write([]byte(big)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(s.chunks) != 2 || len(s.chunks[0]) != wire.MaxChunkBodyBytes || len(s.chunks[1]) != 10 {
		t.Errorf("chunk sizes: %d chunks, want one at the cap and one of 10 bytes", len(s.chunks))
	}
}

func TestWriterKeepsBytesAFailedSendHeld(t *testing.T) {
	s := &sink{fail: errors.New("log down")}
	w := newWriter(t, s, chunkstream.WriterConfig{FlushBytes: 2})
	if _, err := w.Write([]byte("abc")); !errors.Is(err, s.fail) {
		t.Fatalf("Write = %v, want the send error", err)
	}
	s.fail = nil
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.chunks, []string{"abc"}) {
		t.Errorf("chunks = %q, want [abc] sent again", s.chunks)
	}
}

func TestWriterRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]chunkstream.WriterConfig{
		"negative FlushBytes": {FlushBytes: -1},
		"FlushBytes over cap": {FlushBytes: wire.MaxChunkBodyBytes + 1},
		"negative Linger":     {Linger: -time.Second},
	} {
		if _, err := chunkstream.NewWriter(&sink{}, cfg); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	if _, err := chunkstream.NewWriter(nil, chunkstream.WriterConfig{}); err == nil {
		t.Error("nil sender accepted")
	}
}
