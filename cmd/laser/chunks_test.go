package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lasergo/laser/internal/rawsend"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// chunkRecord returns a chunk of a channel as a record at offset: "T" makes
// it the terminal, "E" an error on the channel.
func chunkRecord(t *testing.T, channel wire.ID, seq uint64, body, mark string) *runtime.Incoming {
	t.Helper()
	corr := wire.IDFromUint128(0, 9)
	source, _ := wire.ParseAgentID("writer")
	env := &wire.Envelope{Kind: wire.KindChunk, Conversation: wire.IDFromUint128(0, 1), Source: source,
		Correlation: &corr, Channel: &channel, Sequence: &seq, Body: []byte(body)}
	switch mark {
	case "T":
		env.Last, env.Body = true, nil
		stop := "stop"
		env.FinishReason = &stop
	case "E":
		msg := "model went away"
		b, err := (&wire.ErrorBody{Code: wire.ErrorInternal, Message: &msg}).Marshal()
		if err != nil {
			t.Fatal(err)
		}
		rec := wire.IDFromUint128(0, 77)
		env.Kind, env.Body, env.Record = wire.KindError, b, &rec
	}
	if seq == 0 {
		op := wire.OperationChat
		env.Operation = &op
	}
	payload, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return &runtime.Incoming{Position: runtime.Position{Offset: seq}, Headers: wire.MustEncodeHeaders(wire.EnvelopeHeaders(env, wire.ContentRaw)), Payload: payload}
}

func TestTailPrintsChunksOfAChannelInSequenceOrder(t *testing.T) {
	a, b := wire.IDFromUint128(0, 0xa), wire.IDFromUint128(0, 0xb)
	p := newChunkPrinter()
	var out bytes.Buffer
	for _, rec := range []*runtime.Incoming{
		chunkRecord(t, a, 2, "time", ""),
		chunkRecord(t, a, 0, "once", ""),
		chunkRecord(t, b, 0, "half", ""),
		chunkRecord(t, a, 3, "", "T"),
		chunkRecord(t, b, 1, "", "E"),
		chunkRecord(t, a, 1, "upon", ""),
	} {
		if !p.print(&out, "agent.responses", rec) {
			t.Fatal("a chunk was not taken as one")
		}
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		lines = append(lines, l[strings.Index(l, "chunk"):])
	}
	want := []string{
		"chunk " + a.String() + " #0  open chat  writer -> *  text: \"once\"",
		"chunk " + b.String() + " #0  open chat  writer -> *  text: \"half\"",
		"chunk " + b.String() + " #1  error internal: model went away  writer -> *",
		"chunk " + a.String() + " #1  data  writer -> *  text: \"upon\"",
		"chunk " + a.String() + " #2  data  writer -> *  text: \"time\"",
		"chunk " + a.String() + " #3  end (stop)  writer -> *",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tail printed:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if len(p.channels) != 0 {
		t.Fatalf("%d channels still held after both ended", len(p.channels))
	}
}

func TestTailLeavesOtherRecordsAlone(t *testing.T) {
	var out bytes.Buffer
	if newChunkPrinter().print(&out, "t", &runtime.Incoming{Payload: []byte("plain")}) || out.Len() != 0 {
		t.Fatal("a plain record was printed as a chunk")
	}
}

// TestTailPrintsAChannelWhoseFirstChunkNeverCame: a channel that lost
// sequence 0 is printed, marked, once enough later records went by, and
// is not held forever.
func TestTailPrintsAChannelWhoseFirstChunkNeverCame(t *testing.T) {
	gap := wire.IDFromUint128(0, 0xc)
	p := newChunkPrinter()
	var out bytes.Buffer
	p.print(&out, "agent.responses", chunkRecord(t, gap, 1, "orphan", ""))
	p.print(&out, "agent.responses", chunkRecord(t, gap, 2, "", "T"))
	if out.Len() != 0 {
		t.Fatalf("printed before the gap was given up on:\n%s", out.String())
	}
	for i := range gapPatience {
		p.print(&out, "agent.responses", chunkRecord(t, wire.IDFromUint128(1, uint64(i)), 0, "other", "T"))
	}
	text := out.String()
	if !strings.Contains(text, `#1  data  writer -> *  text: "orphan"  (after a gap: #0 never arrived)`) || !strings.Contains(text, "#2  end (stop)") {
		t.Fatalf("the orphaned chunks were not printed after the gap:\n%s", text)
	}
	if p.held != 0 {
		t.Fatalf("%d chunks still held", p.held)
	}
}

// TestTailBoundsTheChunksItHolds: however many channels wait for an early
// chunk, tail holds at most maxHeldChunks and at most maxChannels channels.
func TestTailBoundsTheChunksItHolds(t *testing.T) {
	p := newChunkPrinter()
	var out bytes.Buffer
	for i := range 3 * maxHeldChunks {
		p.print(&out, "t", chunkRecord(t, wire.IDFromUint128(2, uint64(i)), 1, "early", ""))
		if p.held > maxHeldChunks || len(p.channels) > maxChannels {
			t.Fatalf("after %d records tail holds %d chunks in %d channels", i+1, p.held, len(p.channels))
		}
	}
	for i := range 3 * maxChannels {
		p.print(&out, "t", chunkRecord(t, wire.IDFromUint128(3, uint64(i)), 0, "open", ""))
		if len(p.channels) > maxChannels {
			t.Fatalf("after %d open streams tail tracks %d channels", i+1, len(p.channels))
		}
	}
}

func TestTailFlushPrintsWhatIsHeldBehindAGap(t *testing.T) {
	ch := wire.IDFromUint128(0, 0xd)
	p := newChunkPrinter()
	var out bytes.Buffer
	p.print(&out, "agent.responses", chunkRecord(t, ch, 2, "held", ""))
	p.print(&out, "agent.responses", chunkRecord(t, ch, 4, "", "T"))
	if out.Len() != 0 {
		t.Fatalf("printed before the gap was given up on:\n%s", out.String())
	}
	p.flush(&out)
	text := out.String()
	if !strings.Contains(text, `#2  data  writer -> *  text: "held"  (after a gap: #0–#1 never arrived)`) ||
		!strings.Contains(text, `#4  end (stop)  writer -> *  (after a gap: #3 never arrived)`) {
		t.Fatalf("flush did not print the held chunks with their gaps:\n%s", text)
	}
	if p.held != 0 {
		t.Fatalf("%d chunks still held after a flush", p.held)
	}
}

func TestTailLabelsAChunkArrivingAfterItsGapWasGivenUpAsLate(t *testing.T) {
	ch := wire.IDFromUint128(0, 0xe)
	p := newChunkPrinter()
	var out bytes.Buffer
	p.print(&out, "agent.responses", chunkRecord(t, ch, 1, "second", ""))
	p.flush(&out)
	p.print(&out, "agent.responses", chunkRecord(t, ch, 0, "first", ""))
	p.print(&out, "agent.responses", chunkRecord(t, ch, 1, "second", ""))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], `"first"  (late`) || !strings.Contains(lines[2], "(repeated)") {
		t.Fatalf("want the late #0 labelled late and the second #1 repeated:\n%s", out.String())
	}
}

func TestTailPrintsHeldChunksWhenItStops(t *testing.T) {
	s := seed(t)
	ch := s.client.IDs().NewID()
	source, _ := wire.ParseAgentID("writer")
	corr := s.client.IDs().NewID()
	seq := uint64(1)
	env := &wire.Envelope{Kind: wire.KindChunk, Conversation: s.conv, Source: source, Correlation: &corr, Channel: &ch, Sequence: &seq, Body: []byte("behind a gap")}
	if _, err := rawsend.Envelope(t.Context(), s.client, runtime.TopicResponses, env, wire.ContentRaw); err != nil {
		t.Fatal(err)
	}
	// The seeded stream's three chunks and this one: tail stops after the
	// fourth record, with #1 of this channel still waiting for its #0.
	code, out, errOut := laser(t, "tail", runtime.TopicResponses, "-n", "4", "--from-beginning", "--addr", s.addr)
	if code != exitOK || !strings.Contains(out, `"behind a gap"  (after a gap: #0 never arrived)`) {
		t.Fatalf("tail -n 4: exit %d, the held chunk was lost:\n%s\nstderr: %s", code, out, errOut)
	}
}

func TestFollowCallsIdleOnceTheTopicIsQuiet(t *testing.T) {
	s := seed(t)
	quiet := errors.New("quiet")
	seen := 0
	err := follow(t.Context(), s.tr, runtime.TopicResponses, followOptions{fromStart: true, interval: time.Hour, idle: func() error { return quiet }},
		func(*runtime.Incoming) error { seen++; return nil })
	if !errors.Is(err, quiet) || seen != 3 {
		t.Fatalf("follow returned %v after %d records; want idle called after the 3 seeded", err, seen)
	}
}
