package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// Tail's memory for reordering chunks is bounded whatever the topic holds.
const (
	// maxHeldChunks bounds the early chunks held across all channels; past
	// it the channel that waited longest is printed as it is, gap marked.
	maxHeldChunks = 1024
	// maxChannels bounds the streams tracked; past it the streams that
	// were quiet longest are forgotten.
	maxChannels = 4096
	// gapPatience is how many chunk records may go by while a channel
	// waits for a missing chunk before tail prints what it holds, gap
	// marked: a stream whose first chunk was lost still shows.
	gapPatience = 256
)

// chunkPrinter prints the AGDX chunk streams of a topic one line per chunk,
// each channel in sequence order: a chunk that arrives early is held until
// the ones before it have been printed, or until tail gives up on the gap.
// Everything else is left to the caller.
type chunkPrinter struct {
	channels map[wire.ID]*channelView
	// held counts the chunks held in every channel.
	held int
	// seen counts the chunk records taken: tail's clock for gapPatience.
	seen uint64
	// waiting lists the channels holding chunks, in the order they began to
	// wait; an entry whose channel moved on since is skipped.
	waiting []waitingChannel
}

// channelView is one channel's progress: the next sequence to print and
// the chunks that arrived before their turn.
type channelView struct {
	next  uint64
	held  map[uint64]chunkLine
	ended bool
	// since is when (in chunk records seen) the channel last printed or
	// began to wait.
	since uint64
	// skipped are the sequence ranges tail gave up waiting for (the newest
	// maxSkipped), so one arriving after all is shown as late.
	skipped []seqRange
}

// seqRange is the sequences from first to last, both included.
type seqRange struct{ first, last uint64 }

// maxSkipped bounds the gaps remembered per channel.
const maxSkipped = 8

// late reports whether seq is in a gap tail gave up on.
func (ch *channelView) late(seq uint64) bool {
	return slices.ContainsFunc(ch.skipped, func(r seqRange) bool { return r.first <= seq && seq <= r.last })
}

// waitingChannel is a channel that began holding chunks at since.
type waitingChannel struct {
	id    wire.ID
	since uint64
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
	p.seen++
	id, seq := *env.Channel, *env.Sequence
	ch := p.channel(id)
	switch {
	case seq < ch.next && ch.late(seq):
		writeChunk(w, line, "  (late: printed after its gap was given up on)")
	case seq < ch.next:
		writeChunk(w, line, "  (repeated)")
	case seq > ch.next:
		if _, dup := ch.held[seq]; dup {
			writeChunk(w, line, "  (repeated)")
			break
		}
		if len(ch.held) == 0 {
			ch.since = p.seen
			p.waiting = append(p.waiting, waitingChannel{id: id, since: ch.since})
		}
		ch.held[seq] = line
		p.held++
		if p.held > maxHeldChunks {
			p.giveUpOldestGap(w, true)
		}
	default:
		writeChunk(w, line, "")
		ch.next++
		ch.ended = ch.ended || isEnd(env)
		p.drain(w, id, ch)
	}
	for p.giveUpOldestGap(w, false) {
	}
	return true
}

// channel returns id's view, making one and forgetting the quietest
// streams holding nothing when there are too many.
func (p *chunkPrinter) channel(id wire.ID) *channelView {
	if ch := p.channels[id]; ch != nil {
		return ch
	}
	if len(p.channels) >= maxChannels {
		idle := make([]wire.ID, 0, len(p.channels))
		for cid, ch := range p.channels {
			if len(ch.held) == 0 {
				idle = append(idle, cid)
			}
		}
		slices.SortFunc(idle, func(a, b wire.ID) int { return cmp.Compare(p.channels[a].since, p.channels[b].since) })
		for _, cid := range idle[:min(len(idle), len(p.channels)-maxChannels*3/4)] {
			delete(p.channels, cid)
		}
	}
	ch := &channelView{held: make(map[uint64]chunkLine), since: p.seen}
	p.channels[id] = ch
	return ch
}

// drain prints the held chunks that are now in turn, and forgets the
// channel once it ended with nothing held.
func (p *chunkPrinter) drain(w io.Writer, id wire.ID, ch *channelView) {
	for {
		l, ok := ch.held[ch.next]
		if !ok {
			break
		}
		delete(ch.held, ch.next)
		p.held--
		writeChunk(w, l, "")
		ch.next++
		ch.ended = ch.ended || isEnd(l.env)
	}
	ch.since = p.seen
	if len(ch.held) > 0 {
		p.waiting = append(p.waiting, waitingChannel{id: id, since: ch.since})
	} else if ch.ended && len(ch.skipped) == 0 {
		// A channel with a gap is kept, so a late chunk is told from a
		// new stream; maxChannels bounds how many.
		delete(p.channels, id)
	}
}

// giveUpOldestGap prints the held chunks of the channel that has waited
// longest, skipping its gap, when it waited gapPatience records or when
// now is set; it reports whether it printed anything.
func (p *chunkPrinter) giveUpOldestGap(w io.Writer, now bool) bool {
	for len(p.waiting) > 0 {
		wc := p.waiting[0]
		ch := p.channels[wc.id]
		if ch == nil || len(ch.held) == 0 || ch.since != wc.since {
			p.waiting = p.waiting[1:]
			continue
		}
		if !now && p.seen-wc.since < gapPatience {
			return false
		}
		p.waiting = p.waiting[1:]
		first := slices.Min(slices.Collect(maps.Keys(ch.held)))
		missing := "#" + strconv.FormatUint(ch.next, 10)
		if first-1 > ch.next {
			missing += "–#" + strconv.FormatUint(first-1, 10)
		}
		ch.skipped = append(ch.skipped, seqRange{ch.next, first - 1})
		if len(ch.skipped) > maxSkipped {
			ch.skipped = ch.skipped[1:]
		}
		l := ch.held[first]
		delete(ch.held, first)
		p.held--
		writeChunk(w, l, "  (after a gap: "+missing+" never arrived)")
		ch.next = first + 1
		ch.ended = ch.ended || isEnd(l.env)
		p.drain(w, wc.id, ch)
		return true
	}
	return false
}

// flush prints every chunk still held, each gap marked: tail calls it when
// the topic is quiet and when it stops, so no chunk is lost behind a gap.
func (p *chunkPrinter) flush(w io.Writer) {
	for p.giveUpOldestGap(w, true) {
	}
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
		if text, ok := errorText(env.Body); ok {
			what += " " + text
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
