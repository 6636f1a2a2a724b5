// Package chunkstream reads AGDX chunk streams back from the log after the
// fact, and writes them in fewer, larger chunks: Rebuild turns a finished
// stream into its transcript, Follow resumes a reader from the chunk after
// the last one it saw (following the log until the terminal), and Writer
// coalesces small writes into chunks by size and linger.
//
// Everything here reads through the client's transport (ReadRange): no consumer
// group is joined and nothing is committed, so any number of readers can
// replay a stream while its agent goes on. Readers scan every partition of
// the topic; the chunks of one stream all sit in one partition (they are
// keyed by conversation), so a topic with many partitions costs more reads,
// not wrong answers.
package chunkstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/lasergo/laser/internal/logscan"
	"github.com/lasergo/laser/runtime"
	"github.com/lasergo/laser/wire"
)

// ErrNoStream is the error of a channel with no record on the topic.
var ErrNoStream = errors.New("chunkstream: no record of the channel on the topic")

// Transcript is a stream read back from the log.
type Transcript struct {
	Channel wire.ID
	// Chunks are the bodies in sequence order (a terminal chunk's body,
	// when it has one, last). When the stream is incomplete they stop
	// before the first missing sequence.
	Chunks [][]byte
}

// Rebuild reads the stream of channel from topic and returns its
// transcript. A stream without its terminal chunk fails with a
// *runtime.Error of runtime.CodeTimeout ("stream ended without a terminal
// chunk"), one with a hole in it with "stream chunk missing" (the error's
// Sequence says where), one the responder failed with its remote *runtime.Error; the transcript holds the
// chunks before the failure either way. A channel with no record on the
// topic fails with ErrNoStream.
func Rebuild(ctx context.Context, client *runtime.Client, topic string, channel wire.ID) (Transcript, error) {
	out := Transcript{Channel: channel}
	msgs, _, err := scan(ctx, client.Transport(), topic, channel, nil)
	if err != nil {
		return out, err
	}
	if len(msgs) == 0 {
		return out, fmt.Errorf("%w: channel %s on %s", ErrNoStream, channel, topic)
	}
	// The log holds a stream in publish order, but a retried publish can
	// land a chunk late; in sequence order the assembler never has to hold
	// chunks back, so its buffer need not bound anything here.
	slices.SortStableFunc(msgs, func(a, b *runtime.Message) int {
		return cmp.Compare(seqOf(a), seqOf(b))
	})
	for b, err := range client.AssembleStream(slices.Values(msgs), len(msgs)+1) {
		if err != nil {
			return out, fmt.Errorf("chunkstream: rebuild %s from %s: %w", channel, topic, err)
		}
		out.Chunks = append(out.Chunks, b)
	}
	return out, nil
}

// seqOf is a record's place in its stream; an error without one sorts last.
func seqOf(m *runtime.Message) uint64 {
	if s := m.Envelope.Sequence; s != nil {
		return *s
	}
	return ^uint64(0)
}

// scan reads topic from the offsets in from (nil: from the start) to its
// tail and returns the records of channel, in log order, and the offsets to
// resume from. Records that do not decode are not the stream's and are
// skipped.
func scan(ctx context.Context, t runtime.Transport, topic string, channel wire.ID, from map[uint32]uint64) ([]*runtime.Message, map[uint32]uint64, error) {
	var msgs []*runtime.Message
	next, err := logscan.Topic(ctx, t, topic, from, func(rec *runtime.Incoming) {
		m, err := runtime.DecodeRecord(topic, rec, ^uint64(0))
		if err != nil || m.Envelope == nil || m.Envelope.Channel == nil || *m.Envelope.Channel != channel {
			return
		}
		msgs = append(msgs, m)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("chunkstream: read %s: %w", topic, err)
	}
	return msgs, next, nil
}
