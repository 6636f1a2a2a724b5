package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/cookiejar"
	"strings"
	"sync"
	"testing"
)

func newJar(t *testing.T) *cookiejar.Jar {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return jar
}

// syncBuffer is a buffer a command writes from its goroutine while the
// test reads it, and waits on.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed and replaced at each write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// line waits until a whole line starting with prefix was written and
// returns the rest of it.
func (s *syncBuffer) line(ctx context.Context, prefix string) (string, error) {
	for {
		s.mu.Lock()
		text := s.b.String()
		if s.written == nil {
			s.written = make(chan struct{})
		}
		written := s.written
		s.mu.Unlock()
		for _, l := range strings.SplitAfter(text, "\n") {
			if rest, ok := strings.CutPrefix(l, prefix); ok && strings.HasSuffix(rest, "\n") {
				return strings.TrimSuffix(rest, "\n"), nil
			}
		}
		select {
		case <-written:
		case <-ctx.Done():
			return "", fmt.Errorf("no line %q in:\n%s", prefix, text)
		}
	}
}
