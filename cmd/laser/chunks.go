package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// maxHeldChunks bounds how many early chunks tail holds per channel; past
// it, chunks print as they arrive, marked out of order.
const maxHeldChunks = 1024

// chunkPrinter prints the AGDX chunk streams of a topic one line per chunk,
// each channel in sequence order: a chunk that arrives early is held until
// the ones before it have been printed. Everything else is left to the
// caller.
type chunkPrinter struct {
	channels map[wire.ID]*channelView
}

// channelView is one channel's progress: the next sequence to print and
// the chunks that arrived before their turn.
type channelView struct {
	next uint64
	held map[uint64]chunkLine
}

// chunkLine is a chunk ready to print.
type chunkLine struct {
	topic string
	pos   runtime.Position
	env   *wire.Envelope
}

func newChunkPrinter() *chunkPrinter {
	return &chunkPrinter{channels: make(map[wire.ID]*channelView)}
}

// print writes rec if it belongs to a chunk stream (a chunk, or an error on
// a channel) and reports whether it did.
func (p *chunkPrinter) print(w io.Writer, topic string, rec *runtime.Incoming) bool {
	m, err := runtime.DecodeRecord(topic, rec, ^uint64(0))
	if err != nil || m.Envelope == nil || m.Envelope.Channel == nil {
		return false
	}
	env := m.Envelope
	line := chunkLine{topic: topic, pos: m.Position, env: env}
	if env.Sequence == nil {
		writeChunk(w, line, "")
		return true
	}
	ch := p.channels[*env.Channel]
	if ch == nil {
		ch = &channelView{held: make(map[uint64]chunkLine)}
		p.channels[*env.Channel] = ch
	}
	seq := *env.Sequence
	switch {
	case seq < ch.next:
		writeChunk(w, line, "  (repeated)")
		return true
	case seq > ch.next:
		if len(ch.held) >= maxHeldChunks {
			writeChunk(w, line, "  (out of order)")
			return true
		}
		ch.held[seq] = line
		return true
	}
	writeChunk(w, line, "")
	ch.next++
	ended := isEnd(env)
	for {
		l, ok := ch.held[ch.next]
		if !ok {
			break
		}
		delete(ch.held, ch.next)
		writeChunk(w, l, "")
		ch.next++
		ended = ended || isEnd(l.env)
	}
	if ended && len(ch.held) == 0 {
		delete(p.channels, *env.Channel)
	}
	return true
}

// isEnd reports whether env ends its stream.
func isEnd(env *wire.Envelope) bool { return env.Last || env.Kind == wire.KindError }

// writeChunk prints one chunk: where it is, its channel and sequence, what
// it is (open with its purpose, data, end with its finish reason, or the
// responder's error) and its body.
func writeChunk(w io.Writer, l chunkLine, note string) {
	env := l.env
	seq := "-"
	if env.Sequence != nil {
		seq = strconv.FormatUint(*env.Sequence, 10)
	}
	what := "data"
	switch {
	case env.Kind == wire.KindError:
		what = "error"
		if eb, err := wire.DecodeErrorBody(env.Body); err == nil {
			what += " " + eb.Code.String()
			if eb.Message != nil {
				what += ": " + *eb.Message
			}
		}
	case env.Last:
		what = "end"
		if env.FinishReason != nil {
			what += " (" + *env.FinishReason + ")"
		}
	case env.Operation != nil:
		what = "open " + *env.Operation
	}
	fmt.Fprintf(w, "%s %s  chunk %s #%s  %s  %s -> ", l.topic, l.pos, env.Channel, seq, shown(what), shown(string(env.Source)))
	if env.Target != nil {
		fmt.Fprint(w, shown(string(*env.Target)))
	} else {
		fmt.Fprint(w, "*")
	}
	if env.Kind != wire.KindError && len(env.Body) > 0 {
		text, enc := bodyText(env.Body)
		fmt.Fprintf(w, "  %s: %q", enc, truncate(text, 200))
	}
	fmt.Fprintln(w, note)
}
