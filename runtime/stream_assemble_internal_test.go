package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/lasergo/laser/wire"
)

// chunkMsg is a chunk of channel ch: body "" with last makes the terminal.
func chunkMsg(ch wire.ID, seq uint64, body string, last bool) *Message {
	env := &wire.Envelope{Kind: wire.KindChunk, Channel: &ch, Sequence: &seq, Last: last}
	if body != "" {
		env.Body = []byte(body)
	}
	return &Message{Envelope: env}
}

// feed adds msgs in order and returns the pieces yielded, whether the
// stream finished and the first error.
func feed(a *chunkAssembler, msgs ...*Message) (string, bool, error) {
	var got []string
	for _, m := range msgs {
		ready, finished, err := a.add(m)
		for _, b := range ready {
			got = append(got, string(b))
		}
		if err != nil || finished {
			return strings.Join(got, ","), finished, err
		}
	}
	return strings.Join(got, ","), false, nil
}

func TestChunkAssemblerYieldsInSequenceOrder(t *testing.T) {
	ch := wire.IDFromUint128(0, 1)
	got, finished, err := feed(newChunkAssembler(8),
		chunkMsg(ch, 3, "d", false), chunkMsg(ch, 1, "b", false), chunkMsg(ch, 4, "e", true),
		chunkMsg(ch, 0, "a", false), chunkMsg(ch, 2, "c", false))
	if err != nil || !finished || got != "a,b,c,d,e" {
		t.Fatalf("got %q finished %v err %v", got, finished, err)
	}
}

func TestChunkAssemblerIgnoresAnotherChannel(t *testing.T) {
	ch, other := wire.IDFromUint128(0, 1), wire.IDFromUint128(0, 2)
	got, finished, err := feed(newChunkAssembler(8),
		chunkMsg(ch, 0, "a", false), chunkMsg(other, 0, "x", false), chunkMsg(other, 1, "", true), chunkMsg(ch, 1, "", true))
	if err != nil || !finished || got != "a" {
		t.Fatalf("got %q finished %v err %v", got, finished, err)
	}
}

func TestChunkAssemblerBreaches(t *testing.T) {
	ch := wire.IDFromUint128(0, 1)
	cases := []struct {
		name string
		msgs []*Message
		want error
		seq  uint64
	}{
		{"differing duplicate of a yielded chunk", []*Message{chunkMsg(ch, 0, "a", false), chunkMsg(ch, 0, "z", false)}, errStreamDuplicate, 0},
		{"differing duplicate of a held chunk", []*Message{chunkMsg(ch, 2, "c", false), chunkMsg(ch, 2, "z", false)}, errStreamDuplicate, 2},
		{"differing duplicate of the terminal", []*Message{chunkMsg(ch, 2, "", true), chunkMsg(ch, 2, "z", true)}, errStreamDuplicate, 2},
		{"a data chunk where the terminal is", []*Message{chunkMsg(ch, 2, "c", true), chunkMsg(ch, 2, "c", false)}, errStreamDuplicate, 2},
		{"second terminal below the first", []*Message{chunkMsg(ch, 3, "tail", true), chunkMsg(ch, 2, "", true)}, errStreamTwoTerminals, 2},
		{"chunk past the terminal", []*Message{chunkMsg(ch, 1, "", true), chunkMsg(ch, 2, "c", false)}, errStreamAfterTerminal, 2},
		{"terminal before a held chunk", []*Message{chunkMsg(ch, 3, "d", false), chunkMsg(ch, 2, "", true)}, errStreamAfterTerminal, 3},
		{"chunk after the stream ended", []*Message{chunkMsg(ch, 0, "", true), chunkMsg(ch, 1, "a", false)}, errStreamAfterTerminal, 1},
		{"data chunk at the ended stream's terminal", []*Message{chunkMsg(ch, 0, "", true), chunkMsg(ch, 0, "a", false)}, errStreamDuplicate, 0},
		{"too far ahead", []*Message{chunkMsg(ch, 1, "b", false), chunkMsg(ch, 2, "c", false), chunkMsg(ch, 3, "d", false)}, errStreamOverflow, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newChunkAssembler(2)
			var err error
			for _, m := range c.msgs {
				if _, _, err = a.add(m); err != nil {
					break
				}
			}
			var se *Error
			if !errors.Is(err, c.want) || !errors.As(err, &se) || se.Sequence != c.seq || se.Channel != ch {
				t.Fatalf("error %v, want %v at sequence %d", err, c.want, c.seq)
			}
		})
	}
}

func TestChunkAssemblerTimeoutIsAGapOnceTheTerminalIsKnown(t *testing.T) {
	ch := wire.IDFromUint128(0, 1)
	a := newChunkAssembler(8)
	if _, _, err := feed(a, chunkMsg(ch, 0, "a", false)); err != nil {
		t.Fatal(err)
	}
	if err := a.timeout(); !errors.Is(err, errStreamTimeout) || CodeOf(err) != CodeTimeout {
		t.Fatalf("quiet stream without terminal: %v", err)
	}
	if _, _, err := feed(a, chunkMsg(ch, 2, "", true)); err != nil {
		t.Fatal(err)
	}
	if err := a.timeout(); !errors.Is(err, errStreamGap) || errors.Is(err, errStreamTimeout) {
		t.Fatalf("quiet stream with a known terminal: %v", err)
	}
}

func TestChunkAssemblerEndsWithTheRespondersError(t *testing.T) {
	ch := wire.IDFromUint128(0, 1)
	msg := "model went away"
	body, err := (&wire.ErrorBody{Code: wire.ErrorInternal, Message: &msg, Retryable: true}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	seq := uint64(1)
	fail := &Message{Envelope: &wire.Envelope{Kind: wire.KindError, Channel: &ch, Sequence: &seq, Body: body}}
	got, finished, err := feed(newChunkAssembler(8), fail, chunkMsg(ch, 0, "a", false))
	var re *Error
	if got != "a" || !finished || !(errors.As(err, &re) && re.Remote()) || re.Msg != msg || !re.Retryable {
		t.Fatalf("got %q finished %v err %v", got, finished, err)
	}
}

// A second terminal below the first must not replace it: the stream of
// issue 33 (chunk 0, terminal 3 "tail", terminal 2, chunk 1) ends with an
// error, never cleanly with "tail" and the terminal at 3 silently lost.
func TestChunkAssemblerRefusesASecondTerminalBelowTheFirst(t *testing.T) {
	ch := wire.IDFromUint128(0, 1)
	got, finished, err := feed(newChunkAssembler(8),
		chunkMsg(ch, 0, "c0", false), chunkMsg(ch, 3, "tail", true), chunkMsg(ch, 2, "", true), chunkMsg(ch, 1, "c1", false))
	var se *Error
	if !errors.Is(err, errStreamTwoTerminals) || !errors.As(err, &se) || se.Sequence != 2 || !finished || got != "c0" {
		t.Fatalf("got %q finished %v err %v; want c0, then errStreamTwoTerminals at 2", got, finished, err)
	}
}

// A producer's retry redelivers a chunk identical to one the stream already
// has (yielded, held early, or the terminal): it is dropped, and the stream
// reads as if it came once.
func TestChunkAssemblerDropsAnIdenticalDuplicate(t *testing.T) {
	ch := wire.IDFromUint128(0, 1)
	got, finished, err := feed(newChunkAssembler(8),
		chunkMsg(ch, 0, "a", false), chunkMsg(ch, 0, "a", false), // yielded, then again
		chunkMsg(ch, 2, "c", false), chunkMsg(ch, 2, "c", false), // held early, then again
		chunkMsg(ch, 3, "d", true), chunkMsg(ch, 3, "d", true), // the terminal, then again
		chunkMsg(ch, 1, "b", false))
	if err != nil || !finished || got != "a,b,c,d" {
		t.Fatalf("got %q finished %v err %v; want a,b,c,d and a clean end", got, finished, err)
	}
	// After the end, an identical copy of any chunk is still no breach.
	a := newChunkAssembler(8)
	if _, _, err := feed(a, chunkMsg(ch, 0, "a", false), chunkMsg(ch, 1, "", true)); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*Message{chunkMsg(ch, 0, "a", false), chunkMsg(ch, 1, "", true)} {
		if ready, finished, err := a.add(m); err != nil || !finished || len(ready) != 0 {
			t.Fatalf("identical copy after the end: ready %q finished %v err %v", ready, finished, err)
		}
	}
}

// A duplicate error chunk identical to the one that ended the stream is
// dropped too; one with another body is a breach.
func TestChunkAssemblerComparesErrorDuplicatesByBody(t *testing.T) {
	ch := wire.IDFromUint128(0, 1)
	seq := uint64(1)
	fail := func(body string) *Message {
		return &Message{Envelope: &wire.Envelope{Kind: wire.KindError, Channel: &ch, Sequence: &seq, Body: []byte(body)}}
	}
	a := newChunkAssembler(8)
	if _, _, err := feed(a, fail("x"), fail("x")); err != nil {
		t.Fatalf("identical error duplicate held early: %v", err)
	}
	if _, _, err := a.add(fail("y")); !errors.Is(err, errStreamDuplicate) {
		t.Fatalf("differing error duplicate: %v, want errStreamDuplicate", err)
	}
}
