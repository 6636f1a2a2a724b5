package iggytest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/lasergo/laser/internal/fuzzcheck"
)

// request frames a command: u32 length (code + payload), u32 code, payload.
func request(code uint32, payload []byte) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(4+len(payload)))
	out = binary.LittleEndian.AppendUint32(out, code)
	return append(out, payload...)
}

func nameBytes(s string) []byte { return append([]byte{byte(len(s))}, s...) }

func strIdent(s string) []byte { return append([]byte{2, byte(len(s))}, s...) }

func numIdent(v uint32) []byte { return binary.LittleEndian.AppendUint32([]byte{1, 4}, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// prelude logs in and creates stream s, topic t (2 partitions) and group g,
// joined, so fuzzed requests reach the deep paths.
func prelude() []byte {
	login := cat(nameBytes("iggy"), nameBytes("iggy"), []byte{5, 0, 0, 0}, []byte("0.8.0"), []byte{0, 0, 0, 0})
	topic := cat(strIdent("s"), binary.LittleEndian.AppendUint32(nil, 2), []byte{1}, make([]byte, 16), []byte{0}, nameBytes("t"))
	st := cat(strIdent("s"), strIdent("t"))
	return cat(
		request(CmdLogin, login),
		request(CmdCreateStream, nameBytes("s")),
		request(CmdCreateTopic, topic),
		request(CmdCreateConsumerGroup, cat(st, nameBytes("g"))),
		request(CmdJoinConsumerGroup, cat(st, strIdent("g"))),
	)
}

// sendRequest is a valid one-message send to partition 1 with one header.
func sendRequest() []byte {
	st := cat(strIdent("s"), strIdent("t"))
	partitioning := []byte{2, 4, 1, 0, 0, 0}
	headers := cat([]byte{2, 1, 0, 0, 0}, []byte("k"), []byte{9, 1, 0, 0, 0, 7})
	payload := []byte("hello")
	msg := make([]byte, 64)
	binary.LittleEndian.PutUint32(msg[48:], uint32(len(headers)))
	binary.LittleEndian.PutUint32(msg[52:], uint32(len(payload)))
	msg = cat(msg, payload, headers)
	index := make([]byte, 16)
	binary.LittleEndian.PutUint32(index[4:], uint32(len(msg)))
	meta := cat(st, partitioning, []byte{1, 0, 0, 0})
	return request(CmdSend, cat(binary.LittleEndian.AppendUint32(nil, uint32(len(meta))), meta, index, msg))
}

// exchange runs one connection of a fresh server over a pipe: it writes
// input, closes, and returns the raw answer bytes and any handler panic.
func exchange(t testing.TB, input []byte) ([]byte, []string) {
	var mu sync.Mutex
	var panics []string
	s := newServer(Config{}.resolve(func(v any, stack []byte) {
		mu.Lock()
		defer mu.Unlock()
		panics = append(panics, fmt.Sprintf("%v\n%s", v, stack))
	}))
	// The connection runs synchronously over buffers: the input ends in
	// EOF, which ends the session after the last answer is written.
	placeholder, _ := net.Pipe()
	s.mu.Lock()
	c := s.attachLocked(placeholder)
	s.mu.Unlock()
	var answers bytes.Buffer
	c.serveWith(struct {
		io.Reader
		io.Writer
	}{bytes.NewReader(input), &answers})
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	return answers.Bytes(), panics
}

// checkAnswers verifies the answers are well-framed: status, length, and a
// payload only with status 0.
func checkAnswers(t testing.TB, b []byte) {
	for len(b) > 0 {
		if len(b) < 8 {
			t.Fatalf("answer cut inside its 8-byte head: %x", b)
		}
		status := binary.LittleEndian.Uint32(b[0:4])
		n := binary.LittleEndian.Uint32(b[4:8])
		if status != 0 && n != 0 {
			t.Fatalf("error status %d carries a %d-byte payload", status, n)
		}
		if uint64(n) > uint64(len(b)-8) {
			t.Fatalf("answer claims %d payload bytes, %d follow", n, len(b)-8)
		}
		b = b[8+n:]
	}
}

func TestExchangeAnswersThePrelude(t *testing.T) {
	answers, panics := exchange(t, cat(prelude(), sendRequest()))
	if len(panics) > 0 {
		t.Fatal(panics[0])
	}
	checkAnswers(t, answers)
	// Six requests, every one answered with status 0.
	for i := 0; i < 6; i++ {
		if len(answers) < 8 {
			t.Fatalf("answer %d missing", i)
		}
		if status := binary.LittleEndian.Uint32(answers); status != 0 {
			t.Fatalf("request %d answered with status %d", i, status)
		}
		answers = answers[8+binary.LittleEndian.Uint32(answers[4:8]):]
	}
}

func FuzzRequest(f *testing.F) {
	for _, b := range requestSeeds() {
		f.Add(b)
	}
	f.Fuzz(checkRequest)
}

// requestSeeds are well-formed requests of most commands and two broken
// frames.
func requestSeeds() [][]byte {
	st := cat(strIdent("s"), strIdent("t"))
	return [][]byte{
		request(CmdPing, nil),
		sendRequest(),
		request(CmdPoll, cat([]byte{2}, strIdent("g"), st, []byte{0, 0, 0, 0, 0, 5}, make([]byte, 8), []byte{10, 0, 0, 0, 1})),
		request(CmdPoll, cat([]byte{1}, numIdent(3), st, []byte{1, 1, 0, 0, 0, 4}, make([]byte, 8), []byte{10, 0, 0, 0, 0})),
		request(CmdStoreOffset, cat([]byte{2}, strIdent("g"), st, []byte{1, 1, 0, 0, 0}, make([]byte, 8))),
		request(CmdGetOffset, cat([]byte{1}, numIdent(0), st, []byte{0, 0, 0, 0, 0})),
		request(CmdGetStream, numIdent(0)),
		request(CmdGetTopic, cat(numIdent(0), numIdent(0))),
		request(CmdGetConsumerGroup, cat(st, numIdent(0))),
		request(CmdCreatePartitions, cat(st, []byte{3, 0, 0, 0})),
		request(CmdLeaveConsumerGroup, cat(st, strIdent("g"))),
		request(CmdDeleteStream, strIdent("s")),
		{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0},
		{2, 0, 0, 0},
	}
}

// checkRequest is FuzzRequest's harness: after the prelude, no request may
// make a handler panic, and every answer is well framed.
func checkRequest(t *testing.T, data []byte) {
	answers, panics := exchange(t, cat(prelude(), data))
	if len(panics) > 0 {
		t.Fatalf("handler panicked on %x:\n%s", data, panics[0])
	}
	checkAnswers(t, answers)
}

// TestFuzzHarnessTakesAnyInput runs FuzzRequest's harness over fuzzcheck's
// hostile inputs as a plain test, so a harness that cannot fuzz fails
// every go test run.
func TestFuzzHarnessTakesAnyInput(t *testing.T) {
	fuzzcheck.Run(t, fuzzcheck.Inputs(1, requestSeeds()...), checkRequest)
}
