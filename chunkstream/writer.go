package chunkstream

import (
	"cmp"
	"fmt"
	"time"

	"github.com/lasergo/laser/clock"
	"github.com/lasergo/laser/wire"
)

// Defaults of WriterConfig, the reference runtime's producer-side chunking.
const (
	// DefaultFlushBytes is the buffered body size that sends a chunk.
	DefaultFlushBytes = 512
	// DefaultLinger is how long buffered bytes wait for more before the
	// next write sends them.
	DefaultLinger = 20 * time.Millisecond
)

// Sender sends the chunks of one stream; *runtime.Stream[[]byte] is one.
type Sender interface {
	Send(body []byte) error
	Close() error
}

// WriterConfig is how a Writer coalesces; a zero field takes its default.
type WriterConfig struct {
	// FlushBytes sends a chunk once this many bytes are buffered (default
	// 512; at most wire.MaxChunkBodyBytes).
	FlushBytes int
	// Linger sends the buffer on the first write at least this long after
	// the buffer's first byte (default 20 ms).
	Linger time.Duration
	// Clock times Linger (default clock.System).
	Clock clock.Clock
}

// Writer is an io.Writer over a chunk stream that sends fewer, larger
// chunks: writes are buffered and sent as one chunk once FlushBytes are
// buffered, or on a write once the buffer is Linger old. No goroutine runs
// the linger, so a writer that stops writing holds its buffer until Flush
// or Close (which always flushes). Safe for one goroutine at a time.
type Writer struct {
	s     Sender
	cfg   WriterConfig
	buf   []byte
	first time.Time
}

// NewWriter returns a coalescing writer over s, or an error naming a bad
// bound.
func NewWriter(s Sender, cfg WriterConfig) (*Writer, error) {
	switch {
	case s == nil:
		return nil, fmt.Errorf("chunkstream: no chunk sender")
	case cfg.FlushBytes < 0 || cfg.FlushBytes > wire.MaxChunkBodyBytes:
		return nil, fmt.Errorf("chunkstream: FlushBytes is %d; it must be within 1..%d (0 takes the default %d)", cfg.FlushBytes, wire.MaxChunkBodyBytes, DefaultFlushBytes)
	case cfg.Linger < 0:
		return nil, fmt.Errorf("chunkstream: Linger is %v; it must be positive (0 takes the default %v)", cfg.Linger, DefaultLinger)
	}
	cfg.FlushBytes = cmp.Or(cfg.FlushBytes, DefaultFlushBytes)
	cfg.Linger = cmp.Or(cfg.Linger, DefaultLinger)
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	return &Writer{s: s, cfg: cfg}, nil
}

// Write buffers p and sends what the bounds say is due. A chunk never
// exceeds wire.MaxChunkBodyBytes: a larger write is sent in pieces.
func (w *Writer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(w.buf) == 0 {
		w.first = w.cfg.Clock.Now()
	}
	w.buf = append(w.buf, p...)
	for len(w.buf) >= w.cfg.FlushBytes {
		n := min(len(w.buf), wire.MaxChunkBodyBytes)
		if err := w.send(n); err != nil {
			return len(p), err
		}
	}
	if len(w.buf) > 0 && w.cfg.Clock.Now().Sub(w.first) >= w.cfg.Linger {
		return len(p), w.Flush()
	}
	return len(p), nil
}

// send sends the first n buffered bytes as one chunk.
func (w *Writer) send(n int) error {
	body := make([]byte, n) // the sender may keep the body; the buffer is reused
	copy(body, w.buf)
	if err := w.s.Send(body); err != nil {
		// The bytes stay buffered: a later Flush or Close sends them again.
		return fmt.Errorf("chunkstream: send a chunk of %d bytes: %w", n, err)
	}
	w.buf = w.buf[:copy(w.buf, w.buf[n:])]
	if len(w.buf) > 0 {
		w.first = w.cfg.Clock.Now()
	}
	return nil
}

// Flush sends whatever is buffered as one chunk (or several when it
// exceeds wire.MaxChunkBodyBytes).
func (w *Writer) Flush() error {
	for len(w.buf) > 0 {
		if err := w.send(min(len(w.buf), wire.MaxChunkBodyBytes)); err != nil {
			return err
		}
	}
	return nil
}

// Close flushes and ends the stream with its terminal chunk.
func (w *Writer) Close() error {
	if err := w.Flush(); err != nil {
		return err
	}
	return w.s.Close()
}
