package runtime

import "iter"

// AssembleStream puts the records of one chunk stream back in sequence
// order, by the rules Client.Stream reads a live stream with, and yields
// the bodies: it binds to the channel of the first record and ignores other
// channels, drops an identical copy of a chunk it has, holds at most limit
// chunks that arrive early (DefaultStreamBuffer when limit < 1), and ends
// after the terminal chunk. A breach ends it with an *Error naming the
// channel and sequence, a responder's failure with its remote *Error, and a
// record without a channel with CodeInvalid. When records run out first it
// ends with "stream chunk missing" when a chunk before one it holds (or
// before the terminal) is missing, and with a CodeTimeout "stream ended
// without a terminal chunk" when the stream simply stops. Package chunkstream rebuilds streams from the log with it; the
// client itself is not used.
func (c *Client) AssembleStream(records iter.Seq[*Message], limit int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		if limit < 1 {
			limit = DefaultStreamBuffer
		}
		asm := newChunkAssembler(limit)
		for m := range records {
			if !isStreamRecord(m) {
				yield(nil, errorf(CodeInvalid, "record %s is not on a chunk stream (no channel)", m.Position))
				return
			}
			if !asm.yieldAdded(m, yield) {
				return
			}
		}
		if asm.terminal || len(asm.pending) > 0 {
			yield(nil, asm.fail(errStreamGap, asm.next))
			return
		}
		yield(nil, asm.fail(errStreamTimeout, asm.next))
	}
}
